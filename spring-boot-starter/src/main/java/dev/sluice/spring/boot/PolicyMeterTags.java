package dev.sluice.spring.boot;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Adds the application's {@code sluice.meter-tags.<policy>.<tag>} to the {@code sluice.*} meters of
 * that policy, found by their {@code policy} tag. Policies decided together ({@code policy=a+b})
 * get the tags of each; a tag the policies give different values gets them joined with {@code +}
 * in the policies' order ({@code team=search+reports}), as the {@code policy} tag joins the names.
 * A tag set here replaces one of the same name already on the meter (an application-wide common
 * tag), so the policy's own value wins. Other meters pass untouched.
 *
 * <p>Micrometer asks once per meter, when it is registered, never per decision. Thread-safe:
 * immutable.
 */
final class PolicyMeterTags implements MeterFilter {

    private static final String PREFIX = "sluice.";
    private static final Pattern JOINED = Pattern.compile("\\+");

    private final Map<String, Map<String, String>> tags;

    /** @param tags by policy name then tag name, checked ({@link SluiceSettings#meterTags()}) */
    PolicyMeterTags(Map<String, Map<String, String>> tags) {
        this.tags = Map.copyOf(tags);
    }

    @Override
    public Meter.Id map(Meter.Id id) {
        if (tags.isEmpty() || !id.getName().startsWith(PREFIX)) {
            return id;
        }
        String policy = id.getTag("policy");
        if (policy == null) {
            return id;
        }
        Map<String, Set<String>> added = new LinkedHashMap<>();
        for (String name : JOINED.split(policy)) {
            tags.getOrDefault(name, Map.of()).forEach((tag, value) ->
                    added.computeIfAbsent(tag, t -> new LinkedHashSet<>()).add(value));
        }
        if (added.isEmpty()) {
            return id;
        }
        List<Tag> list = new ArrayList<>(added.size());
        added.forEach((tag, values) -> list.add(Tag.of(tag, String.join("+", values))));
        return id.withTags(list);
    }
}
