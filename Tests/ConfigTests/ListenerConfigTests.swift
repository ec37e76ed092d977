import Config
import Foundation
import Testing

/// `listen:` as one address, a `{ address, tls }` mapping or a list of both, and its errors
/// with their place and key path.
@Suite struct ListenerConfigTests {
    /// Two readable PEM-named files (their content is not read by the loader).
    static func files() throws -> (directory: String, cert: String, key: String) {
        let directory = NSTemporaryDirectory() + "formgate-listener-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["a.pem", "a.key"] {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("x".utf8)))
        }
        return (directory, directory + "/a.pem", directory + "/a.key")
    }

    func errors(_ text: String) -> [String] {
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "l.yaml") else { return [] }
        return errors.errors.map(\.description)
    }

    @Test func oneAddressIsOnePlainListener() throws {
        let config = try ConfigLoader.load(text: "listen: 0.0.0.0:8080\n", file: "l.yaml").get()
        #expect(config.listeners == [ListenerConfig(address: "0.0.0.0:8080")])
        #expect(config.listen == "0.0.0.0:8080")
    }

    @Test func theMappingFormAndTheListForm() throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let single = try ConfigLoader.load(
            text: """
                listen: { address: 127.0.0.1:8443, tls: { certificates: [{ cert: \(files.cert), key: \(files.key) }] } }
                timeouts: { tls_handshake: 3s }
                """, file: "l.yaml"
        ).get()
        let certificate = ListenerConfig.Certificate(certificate: files.cert, key: files.key)
        #expect(
            single.listeners == [
                ListenerConfig(
                    address: "127.0.0.1:8443", tls: .init(certificates: [certificate], minimumVersion: "1.2"))
            ])
        #expect(single.timeouts.tlsHandshake == 3000)

        let list = try ConfigLoader.load(
            text: """
                listen:
                  - 127.0.0.1:8080
                  - address: 0.0.0.0:8443
                    tls:
                      certificates:
                        - { cert: \(files.cert), key: \(files.key) }
                        - { cert: \(files.cert), key: \(files.key) }
                      min_version: "1.3"
                """, file: "l.yaml"
        ).get()
        #expect(list.listeners.count == 2)
        #expect(list.listeners[0] == ListenerConfig(address: "127.0.0.1:8080"))
        #expect(list.listeners[1].tls?.certificates == [certificate, certificate])
        #expect(list.listeners[1].tls?.minimumVersion == "1.3")
        #expect(list.listen == "127.0.0.1:8080")
        #expect(ServerConfig().timeouts.tlsHandshake == 10_000)
    }

    @Test func settingListenReplacesEveryListener() throws {
        var config = ServerConfig()
        config.listeners.append(ListenerConfig(address: "0.0.0.0:8443", tls: .init(certificates: [])))
        config.listen = "127.0.0.1:9999"
        #expect(config.listeners == [ListenerConfig(address: "127.0.0.1:9999")])
    }

    @Test func errorsNameTheirPlaceAndKeyPath() throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let lines = errors(
            """
            listen:
              - nope
              - { address: 127.0.0.1:8443, tls: { certificates: [{ cert: /nonexistent/a.pem, key: \(files.key) }], min_version: "1.1" } }
              - { address: 127.0.0.1:8444, tls: { certificates: [{ cert: \(files.cert) }], ciphers: x } }
              - { tls: { certificates: [{ cert: \(files.cert), key: \(files.key) }] } }
              - { address: 127.0.0.1:8445, tls: { certificates: [] } }
              - { address: 127.0.0.1:8446, tls: {} }
            timeouts: { tls_handshake: 0s }
            """)
        #expect(lines.contains("l.yaml:2:5: listen[0]: expected HOST:PORT, found 'nope'"), "\(lines)")
        #expect(
            lines.contains(
                "l.yaml:3:62: listen[1].tls.certificates[0].cert: cannot read /nonexistent/a.pem: No such file or directory"
            ), "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("l.yaml:3:")
                    && $0.contains("listen[1].tls.min_version: expected \"1.2\" or \"1.3\", found '1.1'")
            }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("l.yaml:4:") && $0.contains("listen[2].tls.certificates[0].key: missing")
            }, "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("l.yaml:4:") && $0.contains("listen[2].tls.ciphers: unknown key") },
            "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("l.yaml:5:") && $0.contains("listen[3].address: a listener needs an address")
            }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("l.yaml:6:") && $0.contains("listen[4].tls.certificates: expected at least one")
            }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("l.yaml:7:")
                    && $0.contains("listen[5].tls.certificates: a TLS listener needs a certificate")
            }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("l.yaml:8:") && $0.contains("timeouts.tls_handshake: must be more than 0")
            }, "\(lines)")
        #expect(lines.count == 9, "\(lines)")
    }

    @Test func anAddressListedTwiceAndAnEmptyList() {
        #expect(
            errors("listen: [127.0.0.1:8080, 127.0.0.1:8080]\n").contains {
                $0.contains("listen[1]: 127.0.0.1:8080 is listed twice")
            })
        #expect(errors("listen: []\n").contains { $0.contains("listen: expected at least one listener") })
        // Port 0 picks a port per listener: several may ask for it.
        #expect(errors("listen: [127.0.0.1:0, 127.0.0.1:0]\n").isEmpty)
    }
}
