package warpsight.eclipse.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import warpsight.eclipse.core.Fixtures;

/**
 * plugin.xml and META-INF/MANIFEST.MF: well formed, and every class, extension point,
 * content type and bundle they name exists — in the built plug-in jar, in Debian's
 * Eclipse 4.26 bundles ($WARPSIGHT_ECLIPSE_PLATFORM_JARS, set by scripts/test-eclipse.sh),
 * or, for LSP4E and CDT, which no registry reachable here ships, as stated below.
 */
class PluginDescriptorTest {
    static Path bridge;
    static Document plugin;
    static Manifest manifest;
    /** Bundle symbolic name to jar, for the platform jars on the test's class path. */
    static final Map<String, Path> bundles = new HashMap<>();
    /** Extension-point ids (qualified) that the platform jars declare. */
    static final Set<String> extensionPoints = new HashSet<>();
    /** Content-type ids the platform jars declare. */
    static final Set<String> contentTypes = new HashSet<>();

    /** Declared by bundles that are not available here (no Debian package, no registry). */
    static final Map<String, String> NOT_AVAILABLE_HERE = Map.of(
            "org.eclipse.lsp4e.languageServer", "org.eclipse.lsp4e",
            "org.eclipse.cdt.core.cxxSource", "org.eclipse.cdt.core");

    /**
     * The attributes of the {@code server} and {@code contentTypeMapping} elements of
     * LSP4E's extension point, from its schema (eclipse/lsp4e,
     * org.eclipse.lsp4e/schema/languageServer.exsd), with the required ones.
     */
    static final Map<String, Set<String>> LSP4E_ATTRIBUTES = Map.of(
            "server", Set.of("id", "label", "class", "clientImpl", "serverInterface", "launcherBuilder", "singleton"),
            "contentTypeMapping", Set.of("id", "contentType", "languageId"));
    static final Map<String, Set<String>> LSP4E_REQUIRED = Map.of(
            "server", Set.of("id", "label", "class"),
            "contentTypeMapping", Set.of("id"));

    @BeforeAll
    static void load() throws Exception {
        bridge = Fixtures.repo().resolve("eclipse-bridge");
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        plugin = f.newDocumentBuilder().parse(bridge.resolve("plugin.xml").toFile());
        try (InputStream in = Files.newInputStream(bridge.resolve("META-INF/MANIFEST.MF"))) {
            manifest = new Manifest(in);
        }
        String jars = System.getenv("WARPSIGHT_ECLIPSE_PLATFORM_JARS");
        assertNotNull(jars, "WARPSIGHT_ECLIPSE_PLATFORM_JARS (scripts/test-eclipse.sh sets it)");
        // Among them the content-type registry, which declares the contentTypes point and the text type.
        for (String j : jars.split(":")) {
            try (JarFile jar = new JarFile(j)) {
                Manifest m = jar.getManifest();
                String bsn = m == null ? null : m.getMainAttributes().getValue("Bundle-SymbolicName");
                if (bsn == null) {
                    continue;
                }
                String name = bsn.split(";")[0].trim();
                bundles.put(name, Path.of(j));
                ZipEntry e = jar.getEntry("plugin.xml");
                if (e == null) {
                    continue;
                }
                Document d;
                try (InputStream in = jar.getInputStream(e)) {
                    d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
                }
                for (Element p : elements(d.getDocumentElement(), "extension-point")) {
                    String id = p.getAttribute("id");
                    extensionPoints.add(id.contains(".") ? id : name + "." + id);
                }
                for (Element ct : elements(d.getDocumentElement(), "content-type")) {
                    contentTypes.add(ct.getAttribute("id"));
                }
            }
        }
    }

    static List<Element> elements(Element root, String tag) {
        List<Element> out = new ArrayList<>();
        NodeList nl = root.getElementsByTagName(tag);
        for (int i = 0; i < nl.getLength(); i++) {
            out.add((Element) nl.item(i));
        }
        return out;
    }

    static List<Element> extensions(String point) {
        List<Element> out = new ArrayList<>();
        for (Element e : elements(plugin.getDocumentElement(), "extension")) {
            if (e.getAttribute("point").equals(point)) {
                out.add(e);
            }
        }
        return out;
    }

    static Set<String> requiredBundles() {
        Set<String> out = new HashSet<>();
        for (String clause : manifest.getMainAttributes().getValue("Require-Bundle").split(",(?=\\s*[a-z])")) {
            out.add(clause.split(";")[0].trim());
        }
        return out;
    }

    @Test
    void manifestIsAnOsgiBundle() {
        Attributes a = manifest.getMainAttributes();
        assertEquals("2", a.getValue("Bundle-ManifestVersion"));
        assertTrue(a.getValue("Bundle-SymbolicName").matches("warpsight\\.eclipse;\\s*singleton:=true"),
                "a plug-in with extensions is a singleton: " + a.getValue("Bundle-SymbolicName"));
        assertTrue(a.getValue("Bundle-Version").matches("\\d+\\.\\d+\\.\\d+"));
        assertEquals("JavaSE-17", a.getValue("Bundle-RequiredExecutionEnvironment"));
        Set<String> req = requiredBundles();
        for (String b : req) {
            if (b.equals("org.eclipse.lsp4e")) {
                assertTrue(manifest.getMainAttributes().getValue("Require-Bundle")
                        .matches("(?s).*org\\.eclipse\\.lsp4e;[^,]*resolution:=optional.*"),
                        "LSP4E is optional: without it the view runs its own server");
                continue;
            }
            assertTrue(bundles.containsKey(b), "the required bundle " + b + " exists (" + bundles.keySet() + ")");
        }
        // Each exported package is in the jar.
        for (String p : a.getValue("Export-Package").split(",")) {
            assertTrue(Files.isDirectory(bridge.resolve("src").resolve(p.trim().replace('.', '/'))), p);
        }
    }

    @Test
    void everyExtensionPointExistsAndItsBundleIsRequired() {
        Set<String> req = requiredBundles();
        for (Element e : elements(plugin.getDocumentElement(), "extension")) {
            String point = e.getAttribute("point");
            String owner = NOT_AVAILABLE_HERE.get(point);
            if (owner != null) {
                assertTrue(req.contains(owner), point + ": its bundle " + owner + " is in Require-Bundle");
                continue;
            }
            assertTrue(extensionPoints.contains(point), "the extension point " + point + " is declared by a platform bundle");
        }
    }

    @Test
    void everyClassExists() throws Exception {
        ClassLoader cl = getClass().getClassLoader();
        Pattern attrs = Pattern.compile("^(class|serverInterface|clientImpl|launcherBuilder)$");
        int checked = 0;
        for (Element e : elements(plugin.getDocumentElement(), "*")) {
            for (int i = 0; i < e.getAttributes().getLength(); i++) {
                String name = e.getAttributes().item(i).getNodeName();
                if (!attrs.matcher(name).matches()) {
                    continue;
                }
                String cls = e.getAttribute(name);
                Path lsp4eSource = bridge.resolve("src-lsp4e").resolve(cls.replace('.', '/') + ".java");
                if (Files.isRegularFile(lsp4eSource) && !hasClass(cls)) {
                    // Compiled only with LSP4E (README "With LSP4E"): the source declares it.
                    String src = Files.readString(lsp4eSource);
                    String simple = cls.substring(cls.lastIndexOf('.') + 1);
                    assertTrue(src.contains("public final class " + simple + " "), cls + " is declared in " + lsp4eSource);
                    checked++;
                    continue;
                }
                Class<?> c = Class.forName(cls, false, cl);
                assertTrue(jarHas(cls), cls + " is in the plug-in jar");
                checked++;
                if (name.equals("serverInterface")) {
                    assertTrue(org.eclipse.lsp4j.services.LanguageServer.class.isAssignableFrom(c), cls + " extends LSP4J's LanguageServer");
                }
                if (e.getTagName().equals("view")) {
                    assertTrue(org.eclipse.ui.IViewPart.class.isAssignableFrom(c), cls + " is a view part");
                }
            }
        }
        assertEquals(3, checked, "the view, the server interface and the connection provider");
    }

    private static boolean hasClass(String cls) {
        try {
            Class.forName(cls, false, PluginDescriptorTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static boolean jarHas(String cls) throws Exception {
        String jar = System.getenv("WARPSIGHT_ECLIPSE_JAR");
        assertNotNull(jar, "WARPSIGHT_ECLIPSE_JAR (scripts/test-eclipse.sh sets it)");
        try (JarFile j = new JarFile(jar)) {
            return j.getEntry(cls.replace('.', '/') + ".class") != null && j.getEntry("plugin.xml") != null;
        }
    }

    @Test
    void contentTypesAndLsp4eMappingsAreConsistent() {
        Set<String> ours = new HashSet<>();
        for (Element ct : elements(plugin.getDocumentElement(), "content-type")) {
            ours.add(ct.getAttribute("id"));
            String base = ct.getAttribute("base-type");
            assertTrue(contentTypes.contains(base) || NOT_AVAILABLE_HERE.containsKey(base),
                    "the base type " + base + " exists");
            assertFalse(ct.getAttribute("file-extensions").isBlank());
        }
        Map<String, String> extensions = new HashMap<>();
        for (Element ct : elements(plugin.getDocumentElement(), "content-type")) {
            for (String x : ct.getAttribute("file-extensions").split(",")) {
                extensions.put(x.trim(), ct.getAttribute("id"));
            }
        }
        assertEquals(Set.of("cu", "cuh", "ptx"), extensions.keySet());
        assertEquals("org.eclipse.cdt.core.cxxSource", baseOf(extensions.get("cu")), "CDT's editor opens .cu");
        assertEquals("org.eclipse.core.runtime.text", baseOf(extensions.get("ptx")));

        List<Element> lsp = extensions("org.eclipse.lsp4e.languageServer");
        assertEquals(1, lsp.size());
        Set<String> servers = new HashSet<>();
        Map<String, String> languageIds = new HashMap<>();
        for (Element e : elements(lsp.get(0), "*")) {
            Set<String> allowed = LSP4E_ATTRIBUTES.get(e.getTagName());
            assertNotNull(allowed, "an element of LSP4E's schema: " + e.getTagName());
            for (int i = 0; i < e.getAttributes().getLength(); i++) {
                String a = e.getAttributes().item(i).getNodeName();
                assertTrue(allowed.contains(a), e.getTagName() + "@" + a + " is in LSP4E's schema");
            }
            for (String r : LSP4E_REQUIRED.get(e.getTagName())) {
                assertFalse(e.getAttribute(r).isBlank(), e.getTagName() + "@" + r + " is required");
            }
            if (e.getTagName().equals("server")) {
                servers.add(e.getAttribute("id"));
            } else {
                languageIds.put(e.getAttribute("contentType"), e.getAttribute("languageId"));
            }
        }
        for (Element e : elements(lsp.get(0), "contentTypeMapping")) {
            assertTrue(servers.contains(e.getAttribute("id")), "the mapping names the server");
        }
        assertEquals(ours, languageIds.keySet(), "every content type of ours is mapped to the server");
        // The language ids the server attaches to (docs/lsp-extensions.md).
        assertEquals("cuda-cpp", languageIds.get(extensions.get("cu")));
        assertEquals("ptx", languageIds.get(extensions.get("ptx")));
        for (Element b : elements(plugin.getDocumentElement(), "editorContentTypeBinding")) {
            assertTrue(ours.contains(b.getAttribute("contentTypeId")), b.getAttribute("contentTypeId"));
        }
    }

    private static String baseOf(String id) {
        for (Element ct : elements(plugin.getDocumentElement(), "content-type")) {
            if (ct.getAttribute("id").equals(id)) {
                return ct.getAttribute("base-type");
            }
        }
        fail("no content type " + id);
        return null;
    }

    @Test
    void viewIdMatchesTheClass() {
        Element view = elements(plugin.getDocumentElement(), "view").get(0);
        assertEquals(warpsight.eclipse.ui.GpuPerformanceView.ID, view.getAttribute("id"));
        assertEquals("GPU Performance", view.getAttribute("name"));
        Matcher m = Pattern.compile("[a-z.]+").matcher(view.getAttribute("category"));
        assertTrue(m.matches());
        Set<String> categories = new HashSet<>();
        for (Element c : elements(plugin.getDocumentElement(), "category")) {
            categories.add(c.getAttribute("id"));
        }
        assertTrue(categories.contains(view.getAttribute("category")));
    }
}
