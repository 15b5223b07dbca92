package warpsight.eclipse.core;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The LSP base protocol (LSP 3.17, "Base Protocol"): each message is a header part of
 * {@code Name: value\r\n} lines ended by an empty line, then a UTF-8 JSON body of exactly
 * {@code Content-Length} bytes.
 */
public final class LspFraming {
    /** A message larger than this is refused (the server's own limit is 256 MiB). */
    public static final int MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
    /** A header line longer than this is refused instead of buffered without end. */
    static final int MAX_HEADER_LINE = 8 * 1024;

    private LspFraming() {
    }

    /** Writes one message (header and body) and flushes. */
    public static void write(OutputStream out, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        String header = "Content-Length: " + body.length + "\r\n\r\n";
        out.write(header.getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
    }

    /**
     * Reads one message body; {@code null} at the end of the stream before any header byte.
     *
     * @throws IOException on a malformed header, a missing or oversized Content-Length, or
     *     a stream that ends inside a message
     */
    public static String read(InputStream in) throws IOException {
        int length = -1;
        boolean any = false;
        while (true) {
            String line = readHeaderLine(in, any);
            if (line == null) {
                return null;
            }
            any = true;
            if (line.isEmpty()) {
                break;
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IOException("malformed LSP header line: " + line);
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("content-length")) {
                long n;
                try {
                    n = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    throw new IOException("Content-Length is not a number: " + value);
                }
                if (n < 0 || n > MAX_MESSAGE_BYTES) {
                    throw new IOException("Content-Length " + n + " is outside 0.." + MAX_MESSAGE_BYTES);
                }
                length = (int) n;
            }
        }
        if (length < 0) {
            throw new IOException("LSP message without a Content-Length header");
        }
        byte[] body = in.readNBytes(length);
        if (body.length != length) {
            throw new EOFException("the stream ended after " + body.length + " of " + length + " body bytes");
        }
        return new String(body, StandardCharsets.UTF_8);
    }

    /** One header line without its CRLF; null at a clean end of stream. */
    private static String readHeaderLine(InputStream in, boolean inMessage) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (buf.size() == 0 && !inMessage) {
                    return null;
                }
                throw new EOFException("the stream ended inside an LSP header");
            }
            if (b == '\n') {
                byte[] bytes = buf.toByteArray();
                int n = bytes.length;
                if (n > 0 && bytes[n - 1] == '\r') {
                    n--;
                }
                return new String(bytes, 0, n, StandardCharsets.US_ASCII);
            }
            if (buf.size() >= MAX_HEADER_LINE) {
                throw new IOException("LSP header line longer than " + MAX_HEADER_LINE + " bytes");
            }
            buf.write(b);
        }
    }
}
