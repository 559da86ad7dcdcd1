package dev.sluice.spring.boot;

import dev.sluice.spring.boot.demo.DemoApplication;
import dev.sluice.web.PolicyRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code forward:} from one {@code @RateLimit} handler to another, on embedded Tomcat over HTTP:
 * each handler's limit is decided once per request, whichever dispatch reaches it.
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ForwardTest {

    @LocalServerPort
    int port;

    @Autowired
    PolicyRegistry policies;

    @Test
    void theTargetOfAForwardIsDecidedByItsOwnLimitOncePerRequest() {
        Http http = new Http(port);
        assertThat(http.get("/forward/from").statusCode()).as("1st").isEqualTo(200);
        assertThat(http.get("/forward/from").statusCode()).as("2nd: the target's 1/1m is used").isEqualTo(429);
        assertThat(http.get("/forward/from").statusCode()).as("3rd").isEqualTo(429);
        assertThat(http.get("/forward/to").statusCode()).as("the target directly").isEqualTo(429);

        // Once per request each: the forwarding handler let all three through, the target one of four.
        assertThat(policies.policy("forward-from").orElseThrow().counts()).containsEntry("allowed", 3L)
                .containsEntry("rejected", 0L);
        assertThat(policies.policy("forward-to").orElseThrow().counts()).containsEntry("allowed", 1L)
                .containsEntry("rejected", 3L);
    }
}
