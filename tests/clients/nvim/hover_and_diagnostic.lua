-- Headless Neovim (0.7+) as a real LSP client of `warpsight lsp`.
-- Opens a PTX file with one garbage line, waits for the diagnostic, asks for a hover on
-- the kernel name, and exits 0 only when both arrived with the expected content.
-- Run: WARPSIGHT_BIN=... FIXTURE=... nvim --headless --clean -u NONE -c "luafile THIS"
local bin = os.getenv("WARPSIGHT_BIN")
local fixture = os.getenv("FIXTURE")
local function fail(msg)
  io.stderr:write("nvim-lsp-test: FAIL: " .. msg .. "\n")
  vim.cmd("cquit 1")
end

vim.cmd("edit " .. fixture)
local buf = vim.api.nvim_get_current_buf()
local got_diags = nil
local client_id = vim.lsp.start_client({
  name = "warpsight",
  cmd = { bin, "lsp" },
  root_dir = vim.fn.getcwd(),
  init_options = { debounceMs = 0 },
  handlers = {
    ["textDocument/publishDiagnostics"] = function(_, result)
      if result and result.uri == vim.uri_from_bufnr(buf) then
        -- Keep the syntax diagnostics (performance findings carry their own codes).
        local syntax = {}
        for _, d in ipairs(result.diagnostics) do
          if d.code == "syntax" then table.insert(syntax, d) end
        end
        got_diags = syntax
      end
    end,
  },
})
if not client_id then fail("could not start the server") end
vim.lsp.buf_attach_client(buf, client_id)

if not vim.wait(20000, function() return got_diags ~= nil end, 50) then
  fail("no publishDiagnostics within 20 s")
end
local bad_line = nil
for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
  if l:find("this is ( not ptx", 1, true) then bad_line = i - 1 end
end
if #got_diags == 0 then fail("expected a diagnostic on line " .. tostring(bad_line)) end
if got_diags[1].range.start.line ~= bad_line then
  fail("diagnostic on line " .. got_diags[1].range.start.line .. ", expected " .. tostring(bad_line))
end

local entry_line, entry_col = nil, nil
for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
  local s = l:find("vadd(", 1, true)
  if l:find(".entry", 1, true) and s then entry_line, entry_col = i - 1, s end
end
local client = vim.lsp.get_client_by_id(client_id)
local resp = client.request_sync("textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = entry_line, character = entry_col },
}, 20000, buf)
if not resp or resp.err or not resp.result then fail("no hover: " .. vim.inspect(resp)) end
local value = resp.result.contents.value or ""
if not value:find("vadd", 1, true) then fail("hover lacks the kernel name: " .. value) end

print("nvim-lsp-test: ok: " .. #got_diags .. " diagnostic(s); hover: " .. value:gsub("\n", " "):sub(1, 80))
client.stop()
vim.wait(2000, function() return client.is_stopped() end, 50)
vim.cmd("qall!")
