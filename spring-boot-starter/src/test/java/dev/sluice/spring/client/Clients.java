package dev.sluice.spring.client;

import dev.sluice.outbound.Permits;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResponseErrorHandler;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

import java.net.http.HttpClient;
import java.time.Duration;

/**
 * The Spring clients under test, each limited by {@link Permits} under one key: one test runs over
 * all of them. A call returns the provider's status (a 429 is an answer, not an error), or throws
 * what the client threw.
 */
enum Clients {
    REST_CLIENT {
        @Override
        Caller limited(Permits permits, String key, String url) {
            RestClient client = RestClient.builder().baseUrl(url).requestFactory(factory())
                    .requestInterceptor(RateLimitClientInterceptor.named(permits, key)).build();
            return path -> client.get().uri(path).exchange((request, response) -> response.getStatusCode().value());
        }
    },
    REST_TEMPLATE {
        @Override
        Caller limited(Permits permits, String key, String url) {
            RestTemplate template = new RestTemplate(factory());
            template.getInterceptors().add(RateLimitClientInterceptor.named(permits, key));
            template.setErrorHandler(new ResponseErrorHandler() {
                @Override
                public boolean hasError(ClientHttpResponse response) {
                    return false;
                }
            });
            return path -> template.getForEntity(url + path, String.class).getStatusCode().value();
        }
    },
    WEB_CLIENT {
        @Override
        Caller limited(Permits permits, String key, String url) {
            WebClient client = webClient(RateLimitExchangeFilter.named(permits, key), url);
            return path -> client.get().uri(path).exchangeToMono(response -> response.releaseBody()
                    .thenReturn(response.statusCode().value())).block(Duration.ofSeconds(30));
        }
    };

    /** One call of a limited client. */
    interface Caller {
        /** The provider's status for {@code path}. */
        int call(String path);
    }

    /** {@code permits}' client of this kind to the provider at {@code url}, every request under {@code key}. */
    abstract Caller limited(Permits permits, String key, String url);

    /** A WebClient over Reactor Netty (the default connector when it is on the class path). */
    static WebClient webClient(RateLimitExchangeFilter filter, String url) {
        return WebClient.builder().baseUrl(url).filter(filter).build();
    }

    private static JdkClientHttpRequestFactory factory() {
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());
        factory.setReadTimeout(Duration.ofSeconds(30));
        return factory;
    }
}
