-- Run after the shipped config (server/trainlint/editors/trainlint.lua): wait for the open log's findings,
-- say READY, wait while the test appends to the file on disk, then dump what the buffer shows.
local ok, err = pcall(function()
  local buf = vim.api.nvim_get_current_buf()
  local want = tonumber(assert(os.getenv("WANT_LINE")))
  local function codes_at(lnum)
    local out = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.lnum == lnum then table.insert(out, d.code) end
    end
    return out
  end
  -- a healthy log has no findings: wait until the config has attached the buffer to the server
  assert(vim.wait(20000, function() return #vim.lsp.buf_get_clients(buf) > 0 end, 50), "the log was not attached")
  local before = vim.api.nvim_buf_line_count(buf)
  local f = io.open(assert(os.getenv("READY_FILE")), "w"); f:write("ready"); f:close()
  local grown = vim.wait(20000, function()
    return vim.api.nvim_buf_line_count(buf) >= want and #codes_at(want - 1) > 0
  end, 50)
  local km = vim.fn.maparg("K", "n", false, true)
  -- the virtual text Neovim drew on the NaN's line (extmarks of the diagnostic namespace's virtual-text namespace)
  local virt = {}
  for _, client in ipairs(vim.lsp.buf_get_clients(buf)) do
    local ns = vim.lsp.diagnostic.get_namespace(client.id)
    local vt_ns = vim.diagnostic.get_namespace(ns).user_data.virt_text_ns
    if vt_ns then
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, vt_ns, 0, -1, { details = true })) do
        local text = ""
        for _, chunk in ipairs(m[4].virt_text or {}) do text = text .. chunk[1] end
        table.insert(virt, { lnum = m[2], text = text })
      end
    end
  end
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(diags, { lnum = d.lnum, col = d.col, code = d.code, severity = d.severity })
  end
  local out = io.open(assert(os.getenv("PROBE_OUT")), "w")
  out:write(vim.json.encode({
    grown = grown, lines_before = before, lines_after = vim.api.nvim_buf_line_count(buf),
    last_line = vim.api.nvim_buf_get_lines(buf, want - 1, want, false)[1],
    codes_at_want = codes_at(want - 1), diagnostics = diags, virtual_text = virt,
    attached = #vim.lsp.buf_get_clients(buf) > 0,
    severity_sort = vim.diagnostic.config().severity_sort == true,
    hover_mapped = type(km) == "table" and km.callback ~= nil,
  }))
  out:close()
end)
if not ok then
  io.stderr:write(tostring(err) .. "\n")
  vim.cmd("cquit 2")
end
vim.cmd("qall!")
