package warpsight.eclipse.core;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The few LSP 3.17 structures this client sends and reads, as plain typed data. */
public final class LspTypes {
    private LspTypes() {
    }

    public static final class InitializeParams {
        public Long processId = ProcessHandle.current().pid();
        public ClientInfo clientInfo = new ClientInfo();
        public String rootUri;
        public Capabilities capabilities = new Capabilities();
        public Object initializationOptions;
    }

    public static final class ClientInfo {
        public String name = "warpsight-eclipse";
        public String version = "0.1.0";
    }

    public static final class Capabilities {
        public General general = new General();
        public TextDocument textDocument = new TextDocument();
    }

    public static final class General {
        /** UTF-16 is what Eclipse's documents count in (and LSP's mandatory default). */
        public List<String> positionEncodings = List.of("utf-16");
    }

    public static final class TextDocument {
        public JsonObject publishDiagnostics = new JsonObject();
        public JsonObject codeLens = new JsonObject();
        public JsonObject hover = new JsonObject();
    }

    public static final class TextDocumentItem {
        public String uri;
        public String languageId;
        public int version;
        public String text;

        public TextDocumentItem(String uri, String languageId, int version, String text) {
            this.uri = uri;
            this.languageId = languageId;
            this.version = version;
            this.text = text;
        }
    }

    public static final class DidOpenParams {
        public TextDocumentItem textDocument;

        public DidOpenParams(TextDocumentItem item) {
            this.textDocument = item;
        }
    }

    public static final class VersionedTextDocumentIdentifier {
        public String uri;
        public int version;
    }

    public static final class TextDocumentIdentifier {
        public String uri;

        public TextDocumentIdentifier(String uri) {
            this.uri = uri;
        }
    }

    /** A full-text change (no range): the whole document replaced. */
    public static final class ContentChange {
        public String text;

        public ContentChange(String text) {
            this.text = text;
        }
    }

    public static final class DidChangeParams {
        public VersionedTextDocumentIdentifier textDocument = new VersionedTextDocumentIdentifier();
        public List<ContentChange> contentChanges = new ArrayList<>();
    }

    public static final class DidCloseParams {
        public TextDocumentIdentifier textDocument;

        public DidCloseParams(String uri) {
            this.textDocument = new TextDocumentIdentifier(uri);
        }
    }

    public static final class CodeLensParams {
        public TextDocumentIdentifier textDocument;

        public CodeLensParams(String uri) {
            this.textDocument = new TextDocumentIdentifier(uri);
        }
    }

    public static final class Position {
        public int line;
        public int character;
    }

    public static final class Range {
        public Position start;
        public Position end;
    }

    public static final class Command {
        public String title;
        public String command;
        public List<Map<String, Object>> arguments;
    }

    public static final class CodeLens {
        public Range range;
        public Command command;
    }

    public static final class Diagnostic {
        public Range range;
        public Integer severity;
        public Object code;
        public String message;
    }

    public static final class PublishDiagnosticsParams {
        public String uri;
        public Integer version;
        public List<Diagnostic> diagnostics = new ArrayList<>();
    }

    /** {@code warpsight/kernelReport} params (docs/lsp-extensions.md). */
    public static final class KernelReportParams {
        public String uri;
        public String kernel;

        public KernelReportParams(String uri, String kernel) {
            this.uri = uri;
            this.kernel = kernel;
        }
    }
}
