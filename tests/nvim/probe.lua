-- Headless Neovim (0.7+) as a real LSP client of `trainlint serve`:
-- start the server, attach the current buffer, wait for diagnostics, hover, dump JSON, quit.
local ok, err = pcall(function()
  local out = assert(os.getenv("PROBE_OUT"))
  local cmd = vim.split(assert(os.getenv("TRAINLINT_CMD")), "\t", { trimempty = true })
  local hover_line = tonumber(os.getenv("HOVER_LINE") or "0")
  local hover_char = tonumber(os.getenv("HOVER_CHAR") or "16")
  local buf = vim.api.nvim_get_current_buf()
  local id = assert(vim.lsp.start_client({
    name = "trainlint",
    cmd = cmd,
    root_dir = assert(os.getenv("ROOT_DIR")),
    workspace_folders = { { uri = vim.uri_from_fname(os.getenv("ROOT_DIR")), name = "ws" } },
  }))
  vim.lsp.buf_attach_client(buf, id)
  local want_bufs = tonumber(os.getenv("WAIT_BUFFERS") or "1")
  local function bufs_with_diagnostics()
    local seen, n = {}, 0
    for _, d in ipairs(vim.diagnostic.get()) do
      if not seen[d.bufnr] then seen[d.bufnr] = true; n = n + 1 end
    end
    return n
  end
  local got = vim.wait(20000, function()
    return #vim.diagnostic.get(buf) > 0 and bufs_with_diagnostics() >= want_bufs
  end, 20)
  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover",
    { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = hover_line, character = hover_char } }, 5000)
  local all = {}
  for _, d in ipairs(vim.diagnostic.get()) do
    table.insert(all, { bufname = vim.api.nvim_buf_get_name(d.bufnr), lnum = d.lnum, col = d.col,
                        code = d.code, severity = d.severity, source = d.source, message = d.message })
  end
  local h = hover and hover[id] and hover[id].result
  -- what the buffer holds where each diagnostic is drawn (col/end_col are byte columns of the buffer line)
  local marked = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local text = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1]
    table.insert(marked, { code = d.code, lnum = d.lnum, text = text and text:sub(d.col + 1, d.end_col) or vim.NIL })
  end
  local f = io.open(out, "w")
  f:write(vim.json.encode({ got = got, buffer = vim.diagnostic.get(buf), all = all, marked = marked,
                            line_count = vim.api.nvim_buf_line_count(buf),
                            hover = h and h.contents and h.contents.value or vim.NIL }))
  f:close()
  vim.lsp.stop_client(id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(id) == nil end, 20)
end)
if not ok then
  io.stderr:write(tostring(err) .. "\n")
  vim.cmd("cquit 2")
end
vim.cmd("qall!")
