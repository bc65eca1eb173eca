//! Prints the YAML events of a file, one per line (a debugging aid).
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: dump_events FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    match asdf_yaml::events::events(&text) {
        Ok(evs) => {
            for (e, at) in evs {
                println!("{at} {e:?}");
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
