//! Parses a YAML file N times and prints the throughput (a profiling aid).
fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), n) = (args.next(), args.next().and_then(|n| n.parse().ok()).unwrap_or(5usize)) else {
        eprintln!("usage: parse_file FILE [TIMES]");
        std::process::exit(2);
    };
    let Ok(text) = std::fs::read(&path) else {
        eprintln!("cannot read {path}");
        std::process::exit(2);
    };
    let t = std::time::Instant::now();
    for _ in 0..n {
        if std::env::var_os("EVENTS_ONLY").is_some() {
            if let Err(e) = asdf_yaml::events::count(&text) {
                eprintln!("{e}");
                std::process::exit(1);
            }
            continue;
        }
        if let Err(e) = asdf_yaml::parse(&text, &asdf_yaml::Limits::default()) {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    let s = t.elapsed().as_secs_f64() / n as f64;
    println!("{:.3} s per parse, {:.1} MB/s", s, text.len() as f64 / s / 1e6);
}
