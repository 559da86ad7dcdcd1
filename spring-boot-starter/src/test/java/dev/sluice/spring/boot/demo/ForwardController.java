package dev.sluice.spring.boot.demo;

import dev.sluice.jaxrs.RateLimit;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;

/** A limited handler that forwards to another limited handler, as a {@code forward:} view name does. */
@Controller
public class ForwardController {

    @RateLimit(policy = "forward-from", limit = "100/1m")
    @GetMapping("/forward/from")
    String from() {
        return "forward:/forward/to";
    }

    @RateLimit(policy = "forward-to", limit = "1/1m")
    @GetMapping("/forward/to")
    @ResponseBody
    String to() {
        return "the target\n";
    }
}
