
# The value of the string field `$2` of the flat JSON object `$1`, its common
# escapes undone. Enough for this example; for nested or unusual JSON write the
# handler in Python or Node, or use jq where it is installed.
json_string() {
  local pattern="\"$2\"[[:space:]]*:[[:space:]]*\"(([^\"\\\\]|\\\\.)*)\""
  if [[ $1 =~ $pattern ]]; then
    local value="${BASH_REMATCH[1]}"
    value="${value//\\\"/\"}"
    value="${value//\\\//\/}"
    printf '%b' "$value"
  fi
}
