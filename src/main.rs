fn main() {
    std::process::exit(octet_host::cli::main());
}
