package dev.sluice.spring.boot;

import dev.sluice.web.KeyResolver;
import dev.sluice.web.RequestView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * A filter's {@code key-expression} or {@code skip-expression}: SpEL parsed once, at start-up, and
 * evaluated per request over a small root, {@code request} ({@code header(name)}, {@code param(name)},
 * {@code path}, {@code method}, {@code remoteAddress}) and {@code principal} (the user's name or
 * {@code null}), also the variables {@code #request} and {@code #principal}.
 *
 * <p>The context is a {@link SimpleEvaluationContext} for read-only data binding: properties are
 * read, instance methods of what the root hands out may be called, but there are no type references
 * ({@code T(...)}), constructors, bean references or assignments. A property is configuration, and
 * whoever writes it could write code; the least-power evaluator still keeps a typo or a copied
 * snippet from reaching into the application. Start-up refuses those constructs outright, so that
 * they fail there, naming the property, rather than on every request.
 *
 * <p>An expression that fails on a request (a method called on a missing header's {@code null}) is
 * logged at debug: a key then falls back to the filter's {@code key} sources, a skip to "not
 * skipped", so a mistake never lets requests through unlimited. {@code request.header('X')?.trim()}
 * avoids it. Thread-safe.
 */
final class RequestExpression {

    /** The request attribute holding the request's path, for a key expression, which sees the request's view only. */
    static final String PATH = RequestExpression.class.getName() + ".path";

    private static final Logger LOG = LoggerFactory.getLogger(RequestExpression.class);
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private final String property;
    private final Expression expression;

    private RequestExpression(String property, Expression expression) {
        this.property = property;
        this.expression = expression;
    }

    /**
     * Parses {@code text}, the value of {@code property} of {@code filter}.
     *
     * @throws SluiceConfigurationException naming the property and the value, when it does not parse or
     *                                      uses what the read-only context refuses
     */
    static RequestExpression parse(SluiceSettings.FilterSettings filter, String property, String text) {
        String name = filter.property(property);
        Expression expression;
        try {
            expression = PARSER.parseExpression(text);
        } catch (ParseException e) {
            throw failure(filter, name, text, "is no SpEL expression: " + e.getSimpleMessage(), e);
        }
        String refused = refused(((SpelExpression) expression).getAST());
        if (refused != null) {
            throw failure(filter, name, text, "may only read the request and the principal, not use " + refused,
                    null);
        }
        return new RequestExpression(name, expression);
    }

    private static SluiceConfigurationException failure(SluiceSettings.FilterSettings filter, String property,
                                                        String text, String problem, Throwable cause) {
        return new SluiceConfigurationException("Sluice filter '" + filter.name() + "': property '" + property
                + "' " + problem + ", got '" + text + "'", property, text, null,
                "Give '" + property + "' an expression over request (header(name), param(name), path, method, "
                        + "remoteAddress) and principal, such as request.header('X-Tenant').", cause);
    }

    /** What the read-only context refuses in {@code node}'s tree, {@code null}: nothing. */
    private static String refused(SpelNode node) {
        String what = node instanceof TypeReference ? "a type reference T(...)"
                : node instanceof ConstructorReference ? "a constructor (new ...)"
                : node instanceof BeanReference ? "a bean reference (@...)"
                : node instanceof FunctionReference ? "a function (#name(...))"
                : node instanceof Assign ? "an assignment" : null;
        for (int i = 0; what == null && i < node.getChildCount(); i++) {
            what = refused(node.getChild(i));
        }
        return what;
    }

    /** The caller the expression gives, as a {@link KeyResolver}; {@code null} or blank: the key sources decide. */
    KeyResolver keyResolver() {
        return view -> {
            Object path = view.attribute(PATH);
            Object value = value(view, path instanceof String p ? p : null, Object.class);
            return value == null ? null : value.toString();
        };
    }

    /** Whether the request is to be left alone: the expression is {@code true}. */
    boolean skips(RequestView view, String path) {
        return Boolean.TRUE.equals(value(view, path, Boolean.class));
    }

    private <T> T value(RequestView view, String path, Class<T> type) {
        Root root = new Root(new Request(view, path), view.principal());
        SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods()
                .withRootObject(root).build();
        context.setVariable("request", root.getRequest());
        context.setVariable("principal", root.getPrincipal());
        try {
            return expression.getValue(context, type);
        } catch (EvaluationException e) {
            LOG.debug("'{}' failed on a request: {}", property, e.getMessage());
            return null;
        }
    }

    @Override
    public String toString() {
        return property + "=" + expression.getExpressionString();
    }

    /** The expressions' root: {@code request} and {@code principal}. */
    public static final class Root {
        private final Request request;
        private final String principal;

        Root(Request request, String principal) {
            this.request = request;
            this.principal = principal;
        }

        /** The request. */
        public Request getRequest() {
            return request;
        }

        /** The authenticated user's name, or {@code null}. */
        public String getPrincipal() {
            return principal;
        }
    }

    /** The request as expressions read it. */
    public static final class Request {
        private final RequestView view;
        private final String path;

        Request(RequestView view, String path) {
            this.view = view;
            this.path = path;
        }

        /** The first value of a request header, or {@code null}. */
        public String header(String name) {
            return view.header(name);
        }

        /** The first value of a query (or form) parameter, or {@code null}. */
        public String param(String name) {
            return view.param(name);
        }

        /** The path inside the application, such as {@code /api/orders}. */
        public String getPath() {
            return path;
        }

        /** The HTTP method, such as {@code GET}. */
        public String getMethod() {
            return view.method();
        }

        /** The socket peer's address. */
        public String getRemoteAddress() {
            return view.remoteAddr();
        }
    }
}
