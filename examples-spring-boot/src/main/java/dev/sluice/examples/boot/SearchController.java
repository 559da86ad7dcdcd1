package dev.sluice.examples.boot;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.security.Principal;

/** The application behind the rate limit: it knows nothing about Sluice. */
@RestController
class SearchController {

    @GetMapping("/search")
    String search(@RequestParam(name = "q", defaultValue = "") String q) {
        return "results for '" + q + "'\n";
    }

    @GetMapping("/account")
    String account(Principal principal) {
        return "account of " + principal.getName() + "\n";
    }
}
