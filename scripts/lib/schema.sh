# The broker's schema as one SQL file (sourced): migrations, then procedures, each sorted by
# name, exactly as the broker applies them.
#   write_schema ROOT OUT_FILE
write_schema() {
  local root=$1 out=$2 f
  : >"$out"
  while IFS= read -r f; do
    [[ -z "$f" ]] && continue
    {
      printf -- '-- %s\n' "${f#"$root"/}"
      cat "$f"
      # A file whose last statement lacks its semicolon must not run into the next file.
      printf '\n;\n'
    } >>"$out"
  done < <(
    for f in "$root"/sql/migrations/*.sql; do echo "$f"; done | LC_ALL=C sort
    for f in "$root"/sql/procedures/*.sql; do echo "$f"; done | LC_ALL=C sort
  )
}
