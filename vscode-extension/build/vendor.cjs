// Copies the charting library the report page loads into media/vendor/ (a build output,
// packaged into the .vsix): Apache ECharts' self-contained browser build and its licence
// and notice, as its Apache-2.0 licence asks of a redistribution. The webview never loads
// anything from the network; its Content-Security-Policy would refuse it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const from = path.dirname(require.resolve("echarts/package.json", { paths: [path.join(__dirname, "..")] }));
const to = path.join(__dirname, "..", "media", "vendor");
fs.mkdirSync(to, { recursive: true });
for (const [src, dst] of [
  ["dist/echarts.min.js", "echarts.min.js"],
  ["LICENSE", "echarts.LICENSE.txt"],
  ["NOTICE", "echarts.NOTICE.txt"],
]) {
  fs.copyFileSync(path.join(from, src), path.join(to, dst));
}
const version = require(path.join(from, "package.json")).version;
console.log(`media/vendor: echarts ${version}`);
