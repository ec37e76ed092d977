import Testing

@testable import EventLoop

/// Which certificate covers a client's SNI name.
@Suite struct ServerNameMatcherTests {
    let matcher = ServerNameMatcher(names: [
        ["a.test", "*.a.test"], ["b.test", "*.wild.test"], ["Exact.Wild.Test"],
    ])

    @Test(arguments: [
        ("a.test", 0), ("A.TEST", 0), ("a.test.", 0), ("x.a.test", 0), ("b.test", 1), ("up.wild.test", 1),
        // An exact name wins over an earlier certificate's wildcard.
        ("exact.wild.test", 2),
    ])
    func coveredNames(name: String, certificate: Int) {
        #expect(matcher.certificate(for: name) == certificate)
    }

    @Test(arguments: [
        "c.test", "x.y.a.test", "wild.test", "", ".", "*.a.test", "a.test.example", "xa.test", "*",
    ])
    func uncoveredNames(name: String) {
        #expect(matcher.certificate(for: name) == nil)
    }
}
