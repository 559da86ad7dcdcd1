package dev.sluice.spring.boot;

import dev.sluice.Limit;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.TestRedis;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.internal.StoreRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.redisson.api.RedissonClient;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The properties of {@code sluice.filters.<name>} that the servlet path takes, in started Boot
 * WebFlux applications on Reactor Netty over real HTTP on 127.0.0.1: {@code exclude} (and the
 * Actuator's paths left alone by a filter of {@code /*}), {@code skip-expression} and
 * {@code key-expression} over the exchange and its principal, {@code key-resolver} and
 * {@code limit-resolver} beans, {@code tier=role} from a Spring Security {@code Authentication}
 * (and the start-up failure without Spring Security), and the application's {@code RedissonClient}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveFilterPropertiesTest {

    /** "ok" on every path. */
    @RestController
    static class Handlers {
        @GetMapping(path = "/**", produces = "text/plain")
        Mono<String> ok() {
            return Mono.just("ok");
        }
    }

    /** The resolver beans the properties name, and a sign-in as an authentication filter does it. */
    static class Beans {
        @Bean
        KeyResolver tenant() {
            return request -> request.header("X-Tenant");
        }

        @Bean
        LimitResolver plans() {
            List<Limit> gold = List.of(Limit.of("reactive.plans.gold", "3/1h"));
            return request -> "gold".equals(request.header("X-Plan")) ? gold : null;
        }

        /**
         * Signs in {@code X-User} with the roles of {@code X-Roles} as a Spring Security
         * {@code Authentication}, before Sluice's filters, as Spring Security's chain would.
         */
        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        WebFilter signIn() {
            return (exchange, chain) -> {
                String user = exchange.getRequest().getHeaders().getFirst("X-User");
                if (user == null) {
                    return chain.filter(exchange);
                }
                String roles = exchange.getRequest().getHeaders().getFirst("X-Roles");
                UsernamePasswordAuthenticationToken authentication = UsernamePasswordAuthenticationToken.authenticated(
                        user, "n/a", AuthorityUtils.commaSeparatedStringToAuthorityList(roles == null ? "" : roles));
                return chain.filter(exchange.mutate().principal(Mono.just(authentication)).build());
            };
        }
    }

    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();
    private int excluding;
    private int resolving;

    @BeforeAll
    void start() {
        excluding = port(start("sluice.key=header:X-Client", "sluice.filters.all.limit=1/1h",
                "sluice.filters.all.policy=reactive-all-" + System.nanoTime(),
                "sluice.filters.all.exclude=/public/*,*.css",
                "sluice.filters.all.skip-expression="
                        + "request.header('X-Internal') == 'yes' and request.path == '/ping'"));
        String stamp = "-" + System.nanoTime();
        resolving = port(start("sluice.key=header:X-Client",
                "sluice.filters.keyed.limit=1/1h", "sluice.filters.keyed.url-patterns=/keyed/*",
                "sluice.filters.keyed.policy=reactive-keyed" + stamp,
                "sluice.filters.keyed.key-expression=(principal ?: 'nobody') + '@' + request.path",
                "sluice.filters.tenants.limit=1/1h", "sluice.filters.tenants.url-patterns=/tenants/*",
                "sluice.filters.tenants.policy=reactive-tenants" + stamp,
                "sluice.filters.tenants.key-resolver=tenant",
                "sluice.filters.plans.limit=1/1h", "sluice.filters.plans.url-patterns=/plans/*",
                "sluice.filters.plans.policy=reactive-plans" + stamp, "sluice.filters.plans.limit-resolver=plans",
                "sluice.filters.tiered.limit=1/1h", "sluice.filters.tiered.url-patterns=/tiered/*",
                "sluice.filters.tiered.policy=reactive-tiered" + stamp, "sluice.filters.tiered.key=principal",
                "sluice.filters.tiered.tier=role", "sluice.filters.tiered.tier-limits=premium:3/1h"));
    }

    private ConfigurableApplicationContext start(String... properties) {
        // the application of the reactive starter's own test, with the handlers and beans below
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ReactiveRateLimitTest.Application.class,
                Handlers.class, Beans.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off")
                .properties(properties).run();
        apps.add(context);
        return context;
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    void stop() {
        apps.forEach(ConfigurableApplicationContext::close);
    }

    private static HttpResponse<String> get(int port, String path, String... headers) {
        return HttpCalls.send("GET", URI.create("http://127.0.0.1:" + port + path), headers);
    }

    private static int status(int port, String path, String... headers) {
        return get(port, path, headers).statusCode();
    }

    @Test
    void excludedPathsPassUntouchedAndTheOthersAreLimited() {
        String client = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> open = get(excluding, "/public/page", "X-Client", client);
            assertThat(open.statusCode()).as("excluded request %d", i).isEqualTo(200);
            assertThat(HttpCalls.header(open, "RateLimit-Limit")).as("no headers: not decided").isNull();
            assertThat(status(excluding, "/site/main.css", "X-Client", client)).isEqualTo(200);
        }
        assertThat(status(excluding, "/api", "X-Client", client)).isEqualTo(200);
        assertThat(status(excluding, "/api", "X-Client", client)).isEqualTo(429);
        // The prefix pattern is no prefix of another segment.
        assertThat(status(excluding, "/publicity", "X-Client", client)).isEqualTo(429);
    }

    @Test
    void aFilterOfEveryPathLeavesTheActuatorAlone() {
        String client = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> health = get(excluding, "/actuator/health", "X-Client", client);
            assertThat(health.statusCode()).as("health check %d", i).isEqualTo(200);
            assertThat(health.body()).contains("UP");
            assertThat(HttpCalls.header(health, "RateLimit-Limit")).isNull();
        }
    }

    @Test
    void aSkipExpressionLeavesItsRequestsAlone() {
        String client = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            assertThat(status(excluding, "/ping", "X-Client", client, "X-Internal", "yes"))
                    .as("skipped request %d", i).isEqualTo(200);
        }
        assertThat(status(excluding, "/ping", "X-Client", client)).isEqualTo(200);
        assertThat(status(excluding, "/ping", "X-Client", client)).isEqualTo(429);
        // Not skipped on another path: the expression reads the path.
        assertThat(status(excluding, "/other", "X-Client", client, "X-Internal", "yes")).isEqualTo(429);
    }

    @Test
    void aKeyExpressionReadsThePrincipalAndThePath() {
        String alice = "alice-" + UUID.randomUUID();
        assertThat(status(resolving, "/keyed/1", "X-User", alice, "X-Client", "c1")).isEqualTo(200);
        // The same user from another client: the same caller.
        assertThat(status(resolving, "/keyed/1", "X-User", alice, "X-Client", "c2")).isEqualTo(429);
        // Another path, another user: other callers.
        assertThat(status(resolving, "/keyed/2", "X-User", alice, "X-Client", "c1")).isEqualTo(200);
        assertThat(status(resolving, "/keyed/1", "X-User", "bob-" + UUID.randomUUID(), "X-Client", "c1"))
                .isEqualTo(200);
    }

    @Test
    void aFilterAsksTheKeyResolverBeanItNames() {
        String tenant = UUID.randomUUID().toString();
        assertThat(status(resolving, "/tenants/x", "X-Tenant", tenant, "X-Client", "c1")).isEqualTo(200);
        assertThat(status(resolving, "/tenants/x", "X-Tenant", tenant, "X-Client", "c2")).isEqualTo(429);
        assertThat(status(resolving, "/tenants/x", "X-Tenant", tenant + "-b", "X-Client", "c1")).isEqualTo(200);
    }

    @Test
    void aFilterAsksTheLimitResolverBeanItNames() {
        String client = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            assertThat(status(resolving, "/plans/x", "X-Plan", "gold", "X-Client", client))
                    .as("gold request %d", i).isEqualTo(200);
        }
        assertThat(status(resolving, "/plans/x", "X-Plan", "gold", "X-Client", client)).isEqualTo(429);
        String basic = UUID.randomUUID().toString();
        assertThat(status(resolving, "/plans/x", "X-Plan", "basic", "X-Client", basic)).isEqualTo(200);
        assertThat(status(resolving, "/plans/x", "X-Plan", "basic", "X-Client", basic)).isEqualTo(429);
    }

    @Test
    void tierRoleReadsTheRolesOfTheSpringSecurityAuthentication() {
        String premium = "p-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            assertThat(status(resolving, "/tiered/x", "X-User", premium, "X-Roles", "ROLE_USER,ROLE_premium"))
                    .as("premium request %d", i).isEqualTo(200);
        }
        assertThat(status(resolving, "/tiered/x", "X-User", premium, "X-Roles", "ROLE_USER,ROLE_premium"))
                .isEqualTo(429);
        // An authority that is not ROLE_premium is not the role.
        String plain = "u-" + UUID.randomUUID();
        assertThat(status(resolving, "/tiered/x", "X-User", plain, "X-Roles", "premium")).isEqualTo(200);
        assertThat(status(resolving, "/tiered/x", "X-User", plain, "X-Roles", "premium")).isEqualTo(429);
    }

    @Test
    void tierRoleWithoutSpringSecurityStopsStartUpNamingTheProperty() {
        new ReactiveWebApplicationContextRunner()
                .withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .withConfiguration(AutoConfigurations.of(SluiceReactiveAutoConfiguration.class))
                .withPropertyValues("sluice.filters.gold.limit=1/1m", "sluice.filters.gold.tier=role",
                        "sluice.filters.gold.tier-limits=premium:10/1m")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(BootApps.messages(context.getStartupFailure()))
                            .contains("property 'sluice.filters.gold.tier'").contains("Spring Security");
                });
    }

    @Test
    void theApplicationsRedissonClientServesTheFilters() {
        TestRedis redis = TestRedis.start();
        RedissonClient client = redis.newClient();
        try {
            try (ConfigurableApplicationContext app = new SpringApplicationBuilder(
                    ReactiveRateLimitTest.Application.class, Handlers.class)
                    .initializers(c -> c.getBeanFactory().registerSingleton("redisson", client))
                    .web(WebApplicationType.REACTIVE).properties("server.port=0", "server.address=127.0.0.1",
                            "spring.main.banner-mode=off", "sluice.store=" + redis.url(), "sluice.timeout=2s",
                            "sluice.key=header:X-Client", "sluice.filters.api.limit=1/1h",
                            "sluice.filters.api.url-patterns=/api/*",
                            "sluice.filters.api.policy=reactive-bean-client-" + System.nanoTime()).run()) {
                RateLimitStore store = StoreRegistry.application().acquire(redis.url());
                try {
                    assertThat(store).isInstanceOf(RedisStore.class);
                    assertThat(((RedisStore) store).client()).as("the store's client").isSameAs(client);
                } finally {
                    StoreRegistry.application().release(redis.url());
                }
                int port = port(app);
                String caller = UUID.randomUUID().toString();
                assertThat(status(port, "/api/x", "X-Client", caller)).isEqualTo(200);
                assertThat(status(port, "/api/x", "X-Client", caller)).isEqualTo(429);
                assertThat(TestRedis.sluiceKeys(client)).as("Sluice's keys, through the bean").isNotEmpty();
            }
            assertThat(client.isShutdown()).as("closed by Sluice").isFalse();
        } finally {
            client.shutdown();
            redis.stop();
        }
    }
}
