package warpsight.eclipse.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LspFramingTest {
    private static ByteArrayInputStream in(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void roundTripCountsBytesNotCharacters() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String json = "{\"t\":\"≈ 3 µs\"}";
        LspFraming.write(out, json);
        LspFraming.write(out, "{}");
        String wire = out.toString(StandardCharsets.UTF_8);
        assertTrue(wire.startsWith("Content-Length: " + json.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n"), wire);
        ByteArrayInputStream back = new ByteArrayInputStream(out.toByteArray());
        assertEquals(json, LspFraming.read(back));
        assertEquals("{}", LspFraming.read(back));
        assertNull(LspFraming.read(back), "a clean end of stream");
    }

    @Test
    void otherHeadersAndCaseAreAccepted() throws IOException {
        assertEquals("{}", LspFraming.read(in("content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}")));
    }

    @Test
    void malformedInputIsAnErrorNotAHang() {
        assertThrows(IOException.class, () -> LspFraming.read(in("Content-Type: x\r\n\r\n{}")), "no Content-Length");
        assertThrows(IOException.class, () -> LspFraming.read(in("Content-Length: two\r\n\r\n{}")));
        assertThrows(IOException.class, () -> LspFraming.read(in("Content-Length: 18446744073709551615\r\n\r\n")));
        assertThrows(IOException.class, () -> LspFraming.read(in("no colon here\r\n\r\n")));
        assertThrows(EOFException.class, () -> LspFraming.read(in("Content-Length: 10\r\n\r\n{}")), "a short body");
        assertThrows(EOFException.class, () -> LspFraming.read(in("Content-Length: 2\r\n")), "the end inside the header");
        assertThrows(IOException.class, () -> LspFraming.read(in("X: " + "a".repeat(20000) + "\r\n\r\n")), "an endless header line");
    }
}
