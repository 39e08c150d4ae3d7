/// mimalloc instead of the system allocator: rendering a list allocates many small strings,
/// and lists answered 25-60 % faster with it (docs/performance.md, "Allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(almanac::cli::main());
}
