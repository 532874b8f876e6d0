//! Link flags an N-API addon needs (symbols resolved by the Node process at load time).

fn main() {
    napi_build::setup();
}
