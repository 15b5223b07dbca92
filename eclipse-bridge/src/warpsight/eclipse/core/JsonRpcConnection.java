package warpsight.eclipse.core;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A JSON-RPC 2.0 client endpoint over LSP framing: requests with numeric ids answered
 * through futures, notifications in both directions, and answers to the requests the
 * server sends the client (via {@link #setRequestHandler}; unknown methods get -32601).
 *
 * <p>One daemon thread reads; writes are serialised on the output stream.
 */
public final class JsonRpcConnection implements Closeable {
    /** serializeNulls: a request's {@code "params": null} (eglot's shutdown) and a null result are sent as such. */
    static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();
    /** For params: a field left null is left out (the server refuses {@code "grid": null}). */
    static final Gson PARAMS = new GsonBuilder().disableHtmlEscaping().create();

    /** A request (JSON-RPC 2.0 § 4). */
    static final class Request {
        final String jsonrpc = "2.0";
        final long id;
        final String method;
        final Object params;

        Request(long id, String method, Object params) {
            this.id = id;
            this.method = method;
            this.params = params;
        }
    }

    /** A notification: a request without an id (JSON-RPC 2.0 § 4.1). */
    static final class Notification {
        final String jsonrpc = "2.0";
        final String method;
        final Object params;

        Notification(String method, Object params) {
            this.method = method;
            this.params = params;
        }
    }

    /** A success response (JSON-RPC 2.0 § 5): {@code result} present, even when null. */
    static final class Result {
        final String jsonrpc = "2.0";
        final JsonElement id;
        final Object result;

        Result(JsonElement id, Object result) {
            this.id = id;
            this.result = result;
        }
    }

    /** An error response (JSON-RPC 2.0 § 5.1). */
    static final class ErrorResponse {
        final String jsonrpc = "2.0";
        final JsonElement id;
        final RpcError error;

        ErrorResponse(JsonElement id, RpcError error) {
            this.id = id;
            this.error = error;
        }
    }

    /** The error object of a response. */
    public static final class RpcError {
        public int code;
        public String message;

        public RpcError() {
        }

        RpcError(int code, String message) {
            this.code = code;
            this.message = message;
        }
    }

    /** A request answered with an error. */
    public static final class RpcException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        public final int code;

        public RpcException(String method, int code, String message) {
            super(method + " failed with error " + code + ": " + message);
            this.code = code;
        }
    }

    private final InputStream in;
    private final OutputStream out;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, CompletableFuture<JsonElement>> pending = new ConcurrentHashMap<>();
    private final Map<Long, String> pendingMethods = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private volatile BiConsumer<String, JsonElement> notificationHandler = (m, p) -> { };
    private volatile Function<JsonObject, Object> requestHandler = r -> null;
    private final Thread reader;

    public JsonRpcConnection(InputStream in, OutputStream out, String name) {
        this.in = in;
        this.out = out;
        this.reader = new Thread(this::readLoop, name + " reader");
        this.reader.setDaemon(true);
    }

    /** Starts reading; set the handlers first. */
    public void start() {
        reader.start();
    }

    public void setNotificationHandler(BiConsumer<String, JsonElement> handler) {
        this.notificationHandler = handler;
    }

    /**
     * Answers the server's requests: the handler returns the result (which may be null);
     * it throws {@link UnsupportedOperationException} for a method it does not serve.
     */
    public void setRequestHandler(Function<JsonObject, Object> handler) {
        this.requestHandler = handler;
    }

    /** Completes (exceptionally when the stream broke) when the input ends. */
    public CompletableFuture<Void> closedFuture() {
        return closed;
    }

    /** Sends a request; the future completes with its result or an {@link RpcException}. */
    public CompletableFuture<JsonElement> request(String method, Object params) {
        long id = nextId.getAndIncrement();
        CompletableFuture<JsonElement> f = new CompletableFuture<>();
        pending.put(id, f);
        pendingMethods.put(id, method);
        if (closed.isDone()) {
            fail(id, new IOException("the connection is closed; " + method + " was not sent"));
            return f;
        }
        try {
            send(new Request(id, method, tree(params)));
        } catch (IOException e) {
            fail(id, e);
        }
        return f;
    }

    /** Sends a notification. */
    public void notify(String method, Object params) throws IOException {
        send(new Notification(method, tree(params)));
    }

    private static JsonElement tree(Object params) {
        return params == null ? JsonNull.INSTANCE : PARAMS.toJsonTree(params);
    }

    private void send(Object message) throws IOException {
        String json = GSON.toJson(message);
        synchronized (out) {
            LspFraming.write(out, json);
        }
    }

    private void fail(long id, Throwable t) {
        pendingMethods.remove(id);
        CompletableFuture<JsonElement> f = pending.remove(id);
        if (f != null) {
            f.completeExceptionally(t);
        }
    }

    private void readLoop() {
        Throwable failure = null;
        try {
            String body;
            while ((body = LspFraming.read(in)) != null) {
                dispatch(body);
            }
        } catch (IOException | RuntimeException e) {
            failure = e;
        }
        IOException ended = new IOException("the server closed the connection"
                + (failure == null ? "" : ": " + failure.getMessage()), failure);
        for (Long id : pending.keySet()) {
            fail(id, ended);
        }
        if (failure == null) {
            closed.complete(null);
        } else {
            closed.completeExceptionally(failure);
        }
    }

    private void dispatch(String body) throws IOException {
        JsonObject msg;
        try {
            msg = JsonParser.parseString(body).getAsJsonObject();
        } catch (JsonParseException | IllegalStateException e) {
            throw new IOException("the server sent a message that is not a JSON object: " + abbreviate(body), e);
        }
        JsonElement id = msg.get("id");
        boolean hasId = id != null && !id.isJsonNull();
        if (msg.has("method")) {
            String method = msg.get("method").getAsString();
            JsonElement params = msg.has("params") ? msg.get("params") : JsonNull.INSTANCE;
            if (!hasId) {
                notificationHandler.accept(method, params);
                return;
            }
            Object answer;
            try {
                answer = new Result(id, requestHandler.apply(msg));
            } catch (UnsupportedOperationException e) {
                answer = new ErrorResponse(id, new RpcError(-32601, "method not found: " + method));
            } catch (RuntimeException e) {
                answer = new ErrorResponse(id, new RpcError(-32603, String.valueOf(e.getMessage())));
            }
            send(answer);
            return;
        }
        if (!hasId || !id.isJsonPrimitive() || !id.getAsJsonPrimitive().isNumber()) {
            // A response to nothing we sent (an error with id null answers a message the
            // server could not read): nothing waits for it.
            return;
        }
        long n = id.getAsLong();
        String method = pendingMethods.remove(n);
        CompletableFuture<JsonElement> f = pending.remove(n);
        if (f == null) {
            return;
        }
        if (msg.has("error") && !msg.get("error").isJsonNull()) {
            RpcError err = GSON.fromJson(msg.get("error"), RpcError.class);
            f.completeExceptionally(new RpcException(method, err.code, err.message));
        } else {
            f.complete(msg.has("result") ? msg.get("result") : JsonNull.INSTANCE);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    /** Closes the output (the server sees the end of its input). */
    @Override
    public void close() throws IOException {
        synchronized (out) {
            out.close();
        }
    }
}
