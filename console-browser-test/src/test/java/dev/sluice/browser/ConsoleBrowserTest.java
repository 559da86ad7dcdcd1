package dev.sluice.browser;

import dev.sluice.servlet.ConsoleServlet;
import dev.sluice.servlet.RateLimitFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.Principal;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console page in Debian's headless Chromium, driven by Selenium: it loads under its own
 * Content-Security-Policy with no console error, shows the policy, and a reset and an override
 * done by clicking work end to end. Leaves a screenshot in {@code docs/images/console.png}.
 */
class ConsoleBrowserTest {

    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static Server server;
    private static String base;
    private static Path profile;
    private static ChromeDriver driver;

    /**
     * Every request to the console comes from an operator in role sluice-admin: the container's login, for this
     * test.
     */
    static final class OperatorLogin implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            chain.doFilter(new HttpServletRequestWrapper((HttpServletRequest) req) {
                @Override
                public Principal getUserPrincipal() {
                    return () -> "operator";
                }

                @Override
                public boolean isUserInRole(String role) {
                    return role.equals("sluice-admin");
                }
            }, res);
        }
    }

    @BeforeAll
    static void start() throws Exception {
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        FilterHolder limit = new FilterHolder(RateLimitFilter.class);
        limit.setName("api");
        limit.setInitParameter("limit", "2/1h");
        limit.setInitParameter("key", "header:X-API-Key");
        limit.setInitParameter("tier", "header:X-Plan");
        limit.setInitParameter("tier-limits", "gold:1/1h");
        context.addFilter(limit, "/api/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(new OperatorLogin()), "/sluice/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
                response.getWriter().write("ok");
            }
        }), "/api/*");
        context.addServlet(new ServletHolder(new ConsoleServlet()), "/sluice/*");
        server.setHandler(context);
        server.start();
        base = "http://127.0.0.1:" + connector.getLocalPort();

        profile = Files.createTempDirectory("sluice-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1200,1400", "--user-data-dir=" + profile);
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).usingAnyFreePort().build();
        driver = new ChromeDriver(service, options);
    }

    @AfterAll
    static void stop() throws Exception {
        if (driver != null) {
            driver.quit();
        }
        if (server != null) {
            server.stop();
        }
    }

    private static HttpResponse<String> api(String key, String... plan) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/api/x")).header("X-API-Key", key);
        for (String p : plan) {
            request.header("X-Plan", p);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void thePageLoadsWithoutErrorsShowsThePolicyAndResetsAndOverridesByClicking() throws Exception {
        assertThat(api("alice").statusCode()).isEqualTo(200);
        assertThat(api("alice").statusCode()).isEqualTo(200);
        assertThat(api("alice").statusCode()).isEqualTo(429);

        driver.get(base + "/sluice/");
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(15));
        WebElement policy = wait.until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("section[data-policy='api']")));
        wait.until(ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector("section[data-policy='api'] .limit"), "2/1h"));
        assertThat(policy.findElement(By.cssSelector(".counts")).getText()).contains("allowed 2", "rejected 1");
        assertThat(policy.findElement(By.cssSelector(".store")).getText()).contains("memory");
        // The chart shows whole seconds only: the bars of these requests come once their second is
        // over, at the page's next refresh (every 2 s).
        wait.until(d -> !d.findElements(By.cssSelector("section[data-policy='api'] .chart rect")).isEmpty());
        assertThat(policy.findElements(By.cssSelector(".top li"))).hasSize(1);

        WebElement caller = policy.findElement(By.cssSelector("form.reset input[name='caller']"));
        caller.sendKeys("alice");
        policy.findElement(By.cssSelector("form.reset button")).click();
        wait.until(ExpectedConditions.textToBePresentInElement(policy.findElement(By.cssSelector(".message")),
                "Reset key~alice"));
        assertThat(api("alice").statusCode()).isEqualTo(200);

        policy.findElement(By.cssSelector("form.set-override input[name='limit']")).sendKeys("7/1h");
        policy.findElement(By.cssSelector("form.set-override button[type='submit']")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector("section[data-policy='api'] .limit"), "7/1h"));
        assertThat(policy.findElement(By.cssSelector(".override")).getText()).contains("7/1h", "by operator");
        assertThat(api("bob").headers().firstValue("RateLimit-Limit")).contains("7");

        File shot = driver.getScreenshotAs(OutputType.FILE);
        Path target = Path.of("..", "docs", "images", "console.png");
        Files.createDirectories(target.getParent());
        Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);

        policy.findElement(By.cssSelector("button.clear-override")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector("section[data-policy='api'] .limit"), "2/1h"));
        assertThat(api("carol").headers().firstValue("RateLimit-Limit")).contains("2");

        // A tier's policy, api/gold: the page addresses it as two path segments, which containers accept.
        assertThat(api("dave", "gold").statusCode()).isEqualTo(200);
        assertThat(api("dave", "gold").statusCode()).isEqualTo(429);
        WebElement gold = wait.until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("section[data-policy='api/gold']")));
        gold.findElement(By.cssSelector("form.reset input[name='caller']")).sendKeys("dave");
        gold.findElement(By.cssSelector("form.reset button")).click();
        wait.until(ExpectedConditions.textToBePresentInElement(gold.findElement(By.cssSelector(".message")),
                "Reset key~dave"));
        assertThat(api("dave", "gold").statusCode()).isEqualTo(200);
        gold.findElement(By.cssSelector("form.set-override input[name='limit']")).sendKeys("5/1h");
        gold.findElement(By.cssSelector("form.set-override button[type='submit']")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector("section[data-policy='api/gold'] .limit"), "5/1h"));
        assertThat(api("erin", "gold").headers().firstValue("RateLimit-Limit")).contains("5");

        List<LogEntry> errors = driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(entry -> entry.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
        assertThat(errors).as("the browser console's errors").isEmpty();
    }
}
