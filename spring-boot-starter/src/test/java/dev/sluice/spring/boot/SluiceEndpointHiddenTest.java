package dev.sluice.spring.boot;

import dev.sluice.spring.boot.demo.DemoApplication;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/** The Actuator endpoint {@code sluice} is not on the web unless the application exposes it, like Actuator's others. */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SluiceEndpointHiddenTest {

    @LocalServerPort
    int port;

    @Test
    void isNotExposedOverTheWebUnlessTheApplicationIncludesIt() {
        Http http = new Http(port);
        assertThat(http.get("/actuator/health").statusCode()).isEqualTo(200); // Actuator is there
        assertThat(http.get("/actuator/sluice").statusCode()).isEqualTo(404);
        assertThat(http.get("/actuator/sluice/search").statusCode()).isEqualTo(404);
    }
}
