package dev.sluice.spring.boot;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.MethodMatcher;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcher;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Proxies every bean with a {@code @RateLimit} public method, other than a controller, so that
 * {@link MethodLimits} decides before each call of such a method; builds each method's limiter as
 * the bean is created, so that a bad annotation stops start-up. Controllers ({@code @Controller},
 * {@code @RestController}) keep Spring MVC's {@link RateLimitInterceptor}, which knows the request:
 * advising them too would decide each request twice.
 */
final class RateLimitedMethods extends AbstractBeanFactoryAwareAdvisingPostProcessor implements DisposableBean {

    private static final long serialVersionUID = 1L;

    private final transient MethodLimits limits;

    RateLimitedMethods(MethodLimits limits) {
        this.limits = limits;
        this.advisor = new DefaultPointcutAdvisor(new Annotated(), limits);
        setBeforeExistingAdvisors(true); // limit before a transaction opens or a cache answers
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (isEligible(bean, beanName)) {
            Class<?> target = AopUtils.getTargetClass(bean);
            ReflectionUtils.doWithMethods(target, m -> limits.guard(target, m),
                    m -> Modifier.isPublic(m.getModifiers()) && MethodLimits.annotated(m, target));
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    @Override
    public void destroy() {
        limits.close();
    }

    /** Public annotated methods of beans that are not controllers. */
    private static final class Annotated extends StaticMethodMatcher implements Pointcut {
        static boolean controller(Class<?> type) {
            return AnnotatedElementUtils.hasAnnotation(type, Controller.class);
        }

        @Override
        public ClassFilter getClassFilter() {
            return type -> !controller(type);
        }

        @Override
        public MethodMatcher getMethodMatcher() {
            return this;
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return Modifier.isPublic(method.getModifiers()) && MethodLimits.annotated(method, targetClass);
        }
    }
}
