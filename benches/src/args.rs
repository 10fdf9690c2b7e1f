//! Command-line flags of the benchmark binaries (`scaling`, `ratios`): `--name value` pairs,
//! without a parser dependency.

/// The value after `name` in `args`, if the flag is there.
pub fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The number after `name`, or `default` when the flag is absent or not a number.
pub fn number(args: &[String], name: &str, default: usize) -> usize {
    arg(args, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated value after `name` (or `default`), each item parsed by `parse`.
pub fn list<T>(args: &[String], name: &str, default: &str, parse: impl Fn(&str) -> T) -> Vec<T> {
    arg(args, name)
        .unwrap_or_else(|| default.to_string())
        .split(',')
        .map(|s| parse(s.trim()))
        .collect()
}

/// The arguments that are neither a `--flag` nor the value after one (input files).
pub fn positional(args: &[String]) -> Vec<&String> {
    let mut after_flag = false;
    args.iter()
        .filter(|a| {
            let flag = a.starts_with("--");
            let keep = !flag && !after_flag;
            after_flag = flag;
            keep
        })
        .collect()
}
