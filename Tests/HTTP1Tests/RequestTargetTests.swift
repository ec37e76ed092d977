import HTTP1
import Testing

@Suite struct RequestTargetTests {
    func normalized(_ text: String) throws(HTTP1Error) -> RequestTarget {
        try RequestTarget(normalizing: Array(text.utf8))
    }

    /// What the upstream gets (origin form) and what routes match (routing path).
    static let normalizedCases: [(String, String, String)] = [
        ("/upload", "/upload", "/upload"),
        ("/x/../upload", "/upload", "/upload"),
        ("//upload", "/upload", "/upload"),
        ("/./upload", "/upload", "/upload"),
        ("/%75pload", "/upload", "/upload"),
        ("/%75%70%6c%6f%61%64", "/upload", "/upload"),
        ("/static/%2e%2e/upload", "/upload", "/upload"),
        ("/static/.%2E/upload", "/upload", "/upload"),
        ("/a/./b/../../upload/", "/upload/", "/upload/"),
        ("/upload/", "/upload/", "/upload/"),
        ("/upload//x///y", "/upload/x/y", "/upload/x/y"),
        ("/a/b/..", "/a/", "/a/"),
        ("/a/.", "/a/", "/a/"),
        ("/a/..", "/", "/"),
        ("/", "/", "/"),
        ("//", "/", "/"),
        ("/UPLOAD", "/UPLOAD", "/UPLOAD"),
        ("/upload?x=1&y=/../", "/upload?x=1&y=/../", "/upload"),
        ("/upload?a[]=1&b={2}|^`", "/upload?a[]=1&b={2}|^`", "/upload"),
        ("/upload?", "/upload?", "/upload"),
        ("/a?b?c", "/a?b?c", "/a"),
        ("/upload;jsessionid=1", "/upload;jsessionid=1", "/upload"),
        ("/up;x/load", "/up;x/load", "/up/load"),
        ("/up%3Bload", "/up%3Bload", "/up"),
        ("/a%20b", "/a%20b", "/a b"),
        ("/a|b", "/a%7Cb", "/a|b"),
        ("/%7e/%41", "/~/A", "/~/A"),
        ("/a%25b", "/a%25b", "/a%b"),
        ("/a%3fb%23c", "/a%3Fb%23c", "/a?b#c"),
        ("/a+b=c:d@e!$&'()*,", "/a+b=c:d@e!$&'()*,", "/a+b=c:d@e!$&'()*,"),
        ("/a%2Bb", "/a%2Bb", "/a+b"),
        ("/..a/b..", "/..a/b..", "/..a/b.."),
    ]

    @Test(arguments: normalizedCases)
    func normalizes(_ input: String, _ forwarded: String, _ routing: String) throws {
        let target = try normalized(input)
        #expect(target.originForm == forwarded)
        #expect(RequestTarget.routingPath(target.path) == Array(routing.utf8))
        // Normalising the normal form changes nothing.
        #expect(try normalized(target.originForm) == target)
    }

    @Test func nonASCIIBytesAreDecodedForRoutingAndEscapedUpstream() throws {
        let target = try normalized("/f%c3%b6to/%FF")
        #expect(target.path == "/f%C3%B6to/%FF")
        #expect(RequestTarget.routingPath(target.path) == [0x2F, 0x66, 0xC3, 0xB6, 0x74, 0x6F, 0x2F, 0xFF])
    }

    static let refused: [(String, HTTP1Error.Reason, Int)] = [
        ("upload", .invalidTarget, 0),
        ("/static/..%2fupload", .encodedSeparator, 10),
        ("/a%2Fb", .encodedSeparator, 2),
        ("/a%5cb", .encodedSeparator, 2),
        ("/a\\b", .invalidTarget, 2),
        ("/a#b", .invalidTarget, 2),
        ("/a?b#c", .invalidTarget, 4),
        ("/a?b\\c", .invalidTarget, 4),
        ("/a?b\"c", .invalidTarget, 4),
        ("/a?<c>", .invalidTarget, 3),
        ("/../upload", .targetAboveRoot, 1),
        ("/a/../../upload", .targetAboveRoot, 6),
        ("/%2e%2e/upload", .targetAboveRoot, 1),
        ("/..", .targetAboveRoot, 1),
        ("/a%zz", .invalidPercentEncoding, 2),
        ("/a%4", .invalidPercentEncoding, 2),
        ("/a%", .invalidPercentEncoding, 2),
        ("/a%%41", .invalidPercentEncoding, 2),
        ("/a%00", .invalidPercentEncoding, 2),
        ("/a%0d%0aX:1", .invalidPercentEncoding, 2),
        ("/a%09", .invalidPercentEncoding, 2),
        ("/a%7F", .invalidPercentEncoding, 2),
        ("/..;/upload", .invalidTarget, 1),
        ("/static/..;x/upload", .invalidTarget, 8),
        ("/.;/upload", .invalidTarget, 1),
        ("/;x/upload", .invalidTarget, 1),
        ("/static/%2e%2e;/upload", .invalidTarget, 8),
    ]

    @Test(arguments: refused)
    func refuses(_ input: String, _ reason: HTTP1Error.Reason, _ offset: Int) {
        #expect(throws: HTTP1Error(reason, at: offset)) { try normalized(input) }
    }

    /// Random targets over an alphabet rich in separators, dots and escapes: whatever is
    /// accepted comes out in normal form (no empty, `.` or `..` segment, every escape two
    /// upper-case digits for a byte that needs one) and stays the same when normalised again.
    @Test func acceptedTargetsAreInNormalForm() throws {
        let alphabet = [
            "/", "/", ".", "..", "a", "%2e", "%2E", "%41", "%7e", "%20", "%3b", ";", "~", "%c3%a9", "?", "%",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var accepted = 0
        for _ in 0..<20_000 {
            var text = "/"
            for _ in 0..<Int(state % 9) {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                text += alphabet[Int(state % UInt64(alphabet.count))]
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1
            guard let target = try? normalized(text) else { continue }
            accepted += 1
            let segments = target.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            #expect(!segments.dropLast().contains { $0.isEmpty || $0 == "." || $0 == ".." }, "\(text)")
            #expect(segments.last != "." && segments.last != "..", "\(text)")
            #expect(
                !target.path.contains("%2E") && !target.path.contains("%41") && !target.path.contains("%7E"))
            #expect(try normalized(target.originForm) == target, "\(text)")
        }
        #expect(accepted > 2000)
    }

    /// The one function both transports forward through (an HTTP/1.1 request line's target,
    /// an HTTP/2 `:path`): the normal form, `*` for OPTIONS only, and no byte a request line
    /// could not carry (an HTTP/2 `:path` can hold a space or a byte above 0x7E).
    @Test func forwardedIsTheNormalFormForEitherTransport() throws {
        for (target, forwarded, _) in Self.normalizedCases {
            #expect(try RequestTarget.forwarded(Array(target.utf8), method: "POST") == forwarded, "\(target)")
        }
        #expect(try RequestTarget.forwarded(Array("*".utf8), method: "OPTIONS") == "*")
        for bad in ["*", "/a b", "/a\u{7F}", "/caf\u{E9}", "/x\\..\\upload", "/upload#x", "upload", ""] {
            #expect(throws: HTTP1Error.self, "\(bad.debugDescription)") {
                try RequestTarget.forwarded(Array(bad.utf8), method: "GET")
            }
        }
    }
}
