#[test]
fn scratch() {
    let name = std::env::var("SEED").unwrap();
    let data = fs_err::read(&name).unwrap();
    let kb: usize = std::env::var("KB").unwrap().parse().unwrap();
    std::thread::Builder::new().stack_size(kb * 1024).spawn(move || {
        let r = skillbox_core::frontmatter::parse_head(&data, false, 1 << 20);
        eprintln!("{:?}", r.map(|p| p.fields.len()).map_err(|d| d.message));
    }).unwrap().join().unwrap();
}
