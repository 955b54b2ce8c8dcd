-- trainlint for Neovim 0.7+: one line in init.lua
--   dofile(vim.fn.trim(vim.fn.system({ "trainlint", "editor-config", "nvim" })))
-- or `:luafile` this file. It starts `trainlint serve` once per project, attaches every buffer the server
-- judges (the server says which: `trainlint/isLog`, not a fixed list of names), reloads those buffers as the
-- run appends to them, sorts signs worst first, shows the rule ID in the virtual text, and maps K (hover) and
-- ]d / [d (next / previous finding).
-- Options, before sourcing: vim.g.trainlint_cmd = { "python3", "-P", "-m", "trainlint.cli", "serve" },
-- vim.g.trainlint_reload_ms = 1000, vim.g.trainlint_no_mappings = true.
local M = {}
local uv = vim.uv or vim.loop
local client_by_root = {}
local judged = {}  -- bufnr -> true for buffers the server judges

local function cmd()
  if vim.g.trainlint_cmd then return vim.g.trainlint_cmd end
  if vim.fn.executable("trainlint") == 1 then return { "trainlint", "serve" } end
  -- -P: the working folder is the project, and a `trainlint/` or `trainlint.py` in it must not be imported
  -- instead of the installed package (a cloned repository would run its own code in the editor).
  return { "python3", "-P", "-m", "trainlint.cli", "serve" }
end

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  local found = vim.fn.finddir(".git", dir .. ";")
  if found ~= "" then return vim.fn.fnamemodify(found, ":p:h:h") end
  local cfg = vim.fn.findfile(".trainlint.yaml", dir .. ";")
  if cfg ~= "" then return vim.fn.fnamemodify(cfg, ":p:h") end
  return vim.fn.getcwd()
end

local function client_for(root)
  local id = client_by_root[root]
  if id and vim.lsp.get_client_by_id(id) then return id end
  local config = {
    name = "trainlint",
    cmd = cmd(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
  }
  if vim.fn.has("nvim-0.11") == 1 then
    id = vim.lsp.start(config, { attach = false })  -- start_client is deprecated there; attach after isLog
  else
    id = vim.lsp.start_client(config)
  end
  client_by_root[root] = id
  if id then M.virtual_text(id) end
  return id
end

-- Virtual text that names the rule (the sign and the colour say how bad): "TP-NAN: `loss`: 1 of 62 ...".
-- Only trainlint's namespace: other servers keep the user's settings.
function M.format(d)
  local first = (d.message or ""):match("^[^\n]*") or ""
  return d.code and (tostring(d.code) .. ": " .. first) or first
end

function M.virtual_text(id)
  local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, id)
  if ok and ns then vim.diagnostic.config({ virtual_text = { format = M.format } }, ns) end
end

local function on_judged(buf)
  judged[buf] = true
  vim.bo[buf].autoread = true
  if vim.g.trainlint_no_mappings then return end
  local function map(lhs, rhs, desc)
    vim.api.nvim_buf_set_keymap(buf, "n", lhs, "", { noremap = true, silent = true, callback = rhs, desc = desc })
  end
  map("K", vim.lsp.buf.hover, "trainlint: measured evidence and interpretation")
  if vim.diagnostic.jump then  -- 0.11+
    map("]d", function() vim.diagnostic.jump({ count = 1, float = true }) end, "trainlint: next finding")
    map("[d", function() vim.diagnostic.jump({ count = -1, float = true }) end, "trainlint: previous finding")
  else
    map("]d", function() vim.diagnostic.goto_next() end, "trainlint: next finding")
    map("[d", function() vim.diagnostic.goto_prev() end, "trainlint: previous finding")
  end
end

-- Ask the server whether it judges this buffer's file; attach if it does.
function M.consider(buf)
  if vim.bo[buf].buftype ~= "" then return end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or vim.fn.filereadable(name) == 0 then return end
  local id = client_for(root_of(name))
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then return end
  client.request("trainlint/isLog", { uri = vim.uri_from_fname(name) }, function(err, result)
    if err or not result or not result.log then return end
    vim.schedule(function()
      if not vim.api.nvim_buf_is_valid(buf) then return end
      vim.lsp.buf_attach_client(buf, id)
      on_judged(buf)
    end)
  end)
end

-- A run appends to its log while it is open: reload the judged buffers that the user has not edited.
local timer = uv.new_timer()
timer:start(0, vim.g.trainlint_reload_ms or 1000, vim.schedule_wrap(function()
  for buf in pairs(judged) do
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
      pcall(vim.cmd, "checktime " .. buf)
    else
      judged[buf] = nil
    end
  end
end))

vim.diagnostic.config({ severity_sort = true })
local group = vim.api.nvim_create_augroup("trainlint", { clear = true })
vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
  group = group,
  callback = function(args) M.consider(args.buf) end,
})
for _, buf in ipairs(vim.api.nvim_list_bufs()) do  -- buffers open before this file was sourced
  if vim.api.nvim_buf_is_loaded(buf) then M.consider(buf) end
end

_G.trainlint = M
return M
