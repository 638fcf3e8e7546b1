-- wrk script: GET PATH with the API key. Env: KEY, PATH_TO_GET.
local key = os.getenv("KEY")
local path = os.getenv("PATH_TO_GET")
function request()
  return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. key })
end
