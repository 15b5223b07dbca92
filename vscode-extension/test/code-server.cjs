//! The browser half of scripts/test-vscode.sh: drives real VS Code (code-server) in Debian's
//! headless Chromium with playwright-core and checks what a user would see.
//!
//! Checks, in order: the workbench loads; opening the .ptx fixture gives it the `ptx` language
//! (the extension's contribution) and a diagnostic squiggle from the server; a code lens with
//! "≈" is rendered above the kernel; the hover on the kernel name (Ctrl+K Ctrl+I) shows the
//! performance card with "occupancy" for both configured GPUs; clicking the code lens opens
//! the report webview with the kernel's occupancy. Each check is counted and a failed check
//! does not stop the later ones, so one run shows everything that is broken. Screenshots go
//! to $OUT_DIR/*.png. The last line printed is `vscode: N passed, M failed`.
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

const toolsRequire = createRequire(path.join(process.env.TOOLS_DIR, "package.json"));
const { chromium } = toolsRequire("playwright-core");

const URL = process.env.CODE_SERVER_URL;
const OUT = process.env.OUT_DIR;
const t0 = Date.now();
let passed = 0;
let failed = 0;

function elapsed() {
  return `${((Date.now() - t0) / 1000).toFixed(1)}s`;
}

async function check(name, fn) {
  try {
    const detail = await fn();
    passed += 1;
    console.log(`ok   ${name} (${elapsed()})${detail ? `: ${detail}` : ""}`);
    return true;
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name} (${elapsed()}): ${String(e && e.message ? e.message : e).split("\n")[0]}`);
    return false;
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function shot(page, name) {
  try {
    await page.screenshot({ path: path.join(OUT, name) });
  } catch (e) {
    console.log(`(screenshot ${name} failed: ${e.message})`);
  }
}

/** Opens a workspace file through the Explorer, falling back to Quick Open. */
async function openFile(page, name) {
  const item = page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${name}"]`).first();
  try {
    await item.waitFor({ state: "visible", timeout: 10000 });
    await item.click();
  } catch {
    await page.keyboard.press("Control+P");
    await page.keyboard.type(name);
    await page.waitForTimeout(500);
    await page.keyboard.press("Enter");
  }
  await page.locator(`.tabs-container .tab[aria-label^="${name}"]`).first().waitFor({ timeout: 10000 });
}

/** Moves the cursor with Go to Line (`line:column`, both 1-based). */
async function goTo(page, line, column) {
  await page.locator(".monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+G");
  await page.keyboard.type(`${line}:${column}`);
  await page.keyboard.press("Enter");
  await page.waitForTimeout(300);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    page.setDefaultTimeout(10000);
    const ptx = "transpose_naive.ptx";

    const loaded = await check("workbench loads", async () => {
      await page.goto(URL);
      await page.locator(".monaco-workbench").waitFor({ timeout: 20000 });
    });
    if (!loaded) return;

    await check("the .ptx file opens as language PTX (the extension's contribution)", async () => {
      await openFile(page, ptx);
      const status = page.locator("#status\\.editor\\.mode");
      await status.waitFor({ timeout: 10000 });
      await page.waitForFunction(() => document.querySelector("#status\\.editor\\.mode")?.textContent?.includes("PTX"), null, {
        timeout: 15000,
      });
      return `status bar says "${(await status.textContent()).trim()}"`;
    });

    await check("the Problems panel lists shared-bank-conflict", async () => {
      await page.keyboard.press("Control+Shift+M");
      const row = page.locator(".markers-panel .monaco-list-row", { hasText: "shared-bank-conflict" }).first();
      await row.waitFor({ timeout: 10000 });
      const text = (await row.innerText()).replace(/\s+/g, " ").trim();
      assert(/32-way/.test(text), `unexpected problem text: ${text}`);
      return `"${text.slice(0, 100)}"`;
    });
    await check("the server publishes a warning squiggle (the shared-bank-conflict finding)", async () => {
      // Clicking the problem moves the editor to the conflicting load. Information-severity
      // findings (tail wave, memory-bound) draw squiggles too; the bank conflict is the one
      // warning in this kernel (docs/diagnostics.md).
      await page.locator(".markers-panel .monaco-list-row", { hasText: "shared-bank-conflict" }).first().click();
      const squiggle = page.locator(".monaco-editor .view-overlays .squiggly-warning").first();
      await squiggle.waitFor({ state: "attached", timeout: 20000 });
      const all = await page.locator(".monaco-editor .view-overlays [class*='squiggly-']").count();
      return `${all} squiggle(s) in view`;
    });

    await shot(page, "01-ptx-warning.png");
    // Back to the editor, with the panel closed so the editor is tall again.
    await page.keyboard.press("Control+J");
    await page.locator(".monaco-editor textarea").first().focus();

    await check('a code lens with "≈" is rendered', async () => {
      await goTo(page, Number(process.env.KERNEL_LINE), 1);
      const lens = page.locator(".monaco-editor .codelens-decoration", { hasText: "≈" }).first();
      await lens.waitFor({ timeout: 20000 });
      return `"${(await lens.innerText()).trim()}"`;
    });
    await shot(page, "02-ptx-codelens.png");

    await check('the hover on the kernel name contains "occupancy" for both GPUs', async () => {
      // KERNEL_LINE is the line of `.visible .entry _Z15transpose_naivePfPKfii(` in the
      // workspace copy; column 20 is inside the name.
      await goTo(page, Number(process.env.KERNEL_LINE), 20);
      await page.keyboard.press("Control+K");
      await page.keyboard.press("Control+I");
      const hover = page.locator(".monaco-hover:not(.hidden)", { hasText: /occupancy/i }).first();
      await hover.waitFor({ state: "visible", timeout: 10000 });
      const text = await hover.innerText();
      assert(/occupancy/i.test(text), "no occupancy in the hover");
      // The card names each target by id in parentheses (the diagnostics above it use only
      // the marketing name), so this checks that warpsight.gpus reached the server.
      assert(text.includes("(a100-sxm4-80gb)"), `the card has no a100-sxm4-80gb section: ${text.slice(0, 200)}`);
      assert(text.includes("(tesla-k20)"), `the card has no tesla-k20 section: ${text.slice(0, 200)}`);
      return `${text.length} characters, starting "${text.slice(0, 80).replace(/\s+/g, " ")}"`;
    });
    await shot(page, "03-ptx-hover.png");
    await page.keyboard.press("Escape");

    await check("clicking the code lens opens the kernel report panel", async () => {
      await page.locator(".monaco-editor .codelens-decoration a", { hasText: "≈" }).first().click();
      const tab = page.locator(".tabs-container .tab", { hasText: "warpsight" }).first();
      await tab.waitFor({ timeout: 10000 });
      // The webview's content lives in a nested iframe; look through every frame.
      let text = "";
      for (let i = 0; i < 60 && !/occupancy/.test(text); i++) {
        await page.waitForTimeout(250);
        for (const frame of page.frames()) {
          try {
            const body = await frame.evaluate(() => document.body?.innerText ?? "");
            if (body.includes("warpsight kernel report")) text = body;
          } catch {
            // Frames come and go while the webview loads.
          }
        }
      }
      assert(text.includes("warpsight kernel report"), "no frame shows the report");
      assert(/occupancy/.test(text), "the report has no occupancy");
      assert(text.includes("shared-bank-conflict"), "the report lacks the shared-bank-conflict finding");
      return `report of ${text.length} characters`;
    });
    await shot(page, "04-report-panel.png");
  } finally {
    await browser.close();
  }
}

main()
  .catch((e) => {
    failed += 1;
    console.log(`FAIL driver: ${e && e.stack ? e.stack : e}`);
  })
  .finally(() => {
    console.log(`vscode: ${passed} passed, ${failed} failed`);
    process.exit(failed === 0 && passed > 0 ? 0 : 1);
  });
