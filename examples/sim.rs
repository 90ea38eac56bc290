fn main() {
    let r = skillc::policy::Rules::builtin();
    let a = std::env::args().nth(1).unwrap();
    let b = std::env::args().nth(2).unwrap();
    println!("{:?}", skillc::cluster::verdict(&r.lexicon, &a, &b));
}
