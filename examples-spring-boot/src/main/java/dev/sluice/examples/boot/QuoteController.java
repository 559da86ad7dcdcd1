package dev.sluice.examples.boot;

import dev.sluice.outbound.PermitUnavailableException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * {@code /quotes/{symbol}}: a quote from the provider, through the rate-limited {@link RestClient}
 * of {@link QuoteProvider}. A call that gets no permit within its wait is never sent; this
 * application answers it {@code 503} with {@code Retry-After}, when a permit could come.
 */
@RestController
class QuoteController {

    private final RestClient quoteClient;

    QuoteController(RestClient quoteClient) {
        this.quoteClient = quoteClient;
    }

    @GetMapping("/quotes/{symbol}")
    String quote(@PathVariable("symbol") String symbol) {
        return quoteClient.get().uri("/quote/{symbol}", symbol).retrieve().body(String.class);
    }

    @ExceptionHandler(PermitUnavailableException.class)
    ResponseEntity<String> providerQuotaSpent(PermitUnavailableException e) {
        // whole seconds, rounded up and at least 1, as Retry-After wants them
        long seconds = Math.max(1, (e.retryAfter().toMillis() + 999) / 1000);
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, Long.toString(seconds))
                .contentType(MediaType.TEXT_PLAIN)
                .body("the quote provider's quota is spent; retry after " + seconds + " s\n");
    }
}
