package dev.sluice.tck;

import org.junit.jupiter.api.ClassTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A group of the kit's tests that needs these capabilities: it runs once when the store supports
 * all of them, and not at all otherwise, so nothing is reported skipped. A store that leaves a
 * capability out is held to its refusal instead ({@link RefusalScenarios}).
 *
 * <p>Why a class template: JUnit reports a test that an assumption or a condition stops as
 * skipped, however the store declared it; a template with no invocation reports nothing, and the
 * group's place in the report is taken by the checks of the refusal.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ClassTemplate
@ExtendWith(WhenSupported.class)
@interface Needs {

    /** The capabilities the group's tests use, all of which the store must support for it to run. */
    Capability[] value();
}
