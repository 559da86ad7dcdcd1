package dev.sluice.javax;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * In Tomcat 9, whose log is {@code java.util.logging}, a password in {@code store} reaches neither
 * the log nor the deployment's errors: the javax filter names the value
 * {@code redis://app:***@127.0.0.1:6379/1}.
 */
class StoreSecretsTomcat9Test {

    private static final String PASSWORD = "Pw-javax-s3cret";

    @TempDir
    Path tomcatBase;

    @Test
    void aFailedStartUpNamesTheStoreWithoutItsPassword() throws Exception {
        StringBuilder log = new StringBuilder();
        SimpleFormatter format = new SimpleFormatter();
        Handler julCapture = new Handler() {
            @Override
            public synchronized void publish(LogRecord record) {
                log.append(format.format(record));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        julCapture.setLevel(Level.ALL);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream originalErr = System.err;
        Logger.getLogger("").addHandler(julCapture);
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        Throwable failure;
        try {
            failure = catchThrowable(() -> Tomcat9.deploy(WebApp.named("secret"), tomcatBase).close());
        } finally {
            System.setErr(originalErr);
            Logger.getLogger("").removeHandler(julCapture);
        }
        assertThat(failure).isInstanceOf(DeploymentFailed.class);
        StringWriter printed = new StringWriter();
        failure.printStackTrace(new PrintWriter(printed, true));
        String all = printed + "\n" + log + "\n" + err.toString(StandardCharsets.UTF_8);
        assertThat(all).contains("init-param 'store'").contains("redis://app:***@127.0.0.1:6379/1")
                .doesNotContain(PASSWORD);
    }
}
