-- recursive fib: the same program as samples/vm/fib.mlir
-- usage: lua5.4 fib.lua N [REPEATS]   prints the result and seconds per run
local n, repeats = tonumber(arg[1]), tonumber(arg[2] or "1")
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
for _ = 1, repeats do
  local t0 = os.clock()
  local r = fib(n)
  print(r, os.clock() - t0)
end
