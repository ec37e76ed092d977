import ProxyCore
import Testing

@Suite struct RouteTableTests {
    let table: RouteTable = [
        Route(pathPrefix: "/"), Route(pathPrefix: "/upload"),
        Route(name: "a", pathPrefix: "/upload", host: "A.example"),
        Route(pathPrefix: "/upload/big"), Route(name: "v6", pathPrefix: "/upload", host: "[::1]"),
    ]

    @Test(arguments: [
        ("/upload", "b", "/upload"),
        ("/upload", "a.example:8080", "a"),
        ("/upload", "A.EXAMPLE", "a"),
        ("/upload/x", "[::1]:8080", "v6"),
        ("/upload/big/x", "", "/upload/big"),
        ("/uploads", "a.example", "/"),
    ])
    func longestPrefixThenHost(path: String, host: String, expected: String) {
        #expect(table.match(path: path.utf8, host: host.utf8)?.name == expected)
    }

    @Test func noRouteWithoutARootPrefix() {
        let table: RouteTable = [Route(pathPrefix: "/upload")]
        #expect(table.match(path: "/up".utf8) == nil)
        #expect(table.match(path: "/upload".utf8)?.name == "/upload")
        #expect(table.count == 1)
    }

    @Test func firstOfEqualsWins() {
        let table: RouteTable = [Route(name: "one", pathPrefix: "/u"), Route(name: "two", pathPrefix: "/u")]
        #expect(table.match(path: "/u/x".utf8)?.name == "one")
    }
}
