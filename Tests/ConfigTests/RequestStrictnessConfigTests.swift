import Config
import Testing

/// `underscores_in_headers` and the form `match.path` must be written in.
@Suite struct RequestStrictnessConfigTests {
    func load(_ yaml: String) -> Result<ServerConfig, ConfigErrors> {
        ConfigLoader.load(text: yaml, file: "t.yaml")
    }

    @Test func underscoresAreDroppedUnlessAllowed() throws {
        #expect(try !load("routes: []\n").get().underscoresInHeaders)
        #expect(try load("underscores_in_headers: true\n").get().underscoresInHeaders)
        guard case .failure(let errors) = load("underscores_in_headers: maybe\n") else {
            Issue.record("a non-boolean was accepted")
            return
        }
        #expect("\(errors)".contains("t.yaml:1:25: underscores_in_headers"))
    }

    @Test(arguments: [
        "/a/../upload", "//upload", "/./upload", "/%75pload", "/upload;x", "/a/.", "/a\\b", "/a#b",
    ])
    func prefixesMustBeNormalised(_ path: String) {
        guard
            case .failure(let errors) = load(
                "routes:\n  - match: { path: \"\(path.replacingOccurrences(of: "\\", with: "\\\\"))\" }\n")
        else {
            Issue.record("\(path) was accepted")
            return
        }
        #expect("\(errors)".contains("routes[0].match.path: write the path decoded and normalised"))
    }

    @Test(arguments: ["/", "/upload", "/upload/", "/a.b/..c/d..", "/фото"])
    func normalisedPrefixesLoad(_ path: String) throws {
        #expect(
            try load("routes:\n  - match: { path: \"\(path)\" }\n").get().routes.first?.pathPrefix == path)
    }

    @Test func routesMatchTheRoutingPath() throws {
        let config = try load("routes:\n  - match: { path: /upload }\n  - match: { path: /фото }\n").get()
        #expect(config.route(path: "/upload", host: nil)?.pathPrefix == "/upload")
        #expect(config.route(path: "/upload/x", host: nil)?.pathPrefix == "/upload")
        #expect(config.route(path: "/uploads", host: nil) == nil)
        #expect(config.route(path: "/UPLOAD", host: nil) == nil)
        #expect(config.route(path: [0x2F, 0xD1, 0x84, 0xD0, 0xBE, 0xD1, 0x82, 0xD0, 0xBE], host: nil) != nil)
    }
}
