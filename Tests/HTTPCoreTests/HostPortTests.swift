import HTTPCore
import Testing

/// `HostPort.split`: names, IPv4 and bracketed IPv6 hosts, with and without a port; ports out
/// of range, junk after the brackets and an unclosed bracket are refused with the message the
/// URL parsers show.
@Suite struct HostPortTests {
    static func split(_ text: String) -> (String, Int)? {
        guard case .success(let value) = HostPort.split(Substring(text), defaultPort: 4318) else {
            return nil
        }
        return (String(value.host), value.port)
    }

    static func problem(_ text: String) -> String? {
        guard case .failure(let problem) = HostPort.split(Substring(text), defaultPort: 4318) else {
            return nil
        }
        return problem.description
    }

    @Test func hostsAndPorts() {
        #expect(Self.split("collector")! == ("collector", 4318))
        #expect(Self.split("127.0.0.1:6379")! == ("127.0.0.1", 6379))
        #expect(Self.split("[::1]")! == ("::1", 4318))
        #expect(Self.split("[fe80::1]:1")! == ("fe80::1", 1))
        #expect(Self.split("h:65535")! == ("h", 65_535))
        #expect(Self.split("")! == ("", 4318))
    }

    @Test func refusals() {
        let port = "expected a port from 1 to 65535 after the host"
        for text in ["h:0", "h:65536", "h:", "h:x", "[::1]x", "[::1]:", "[::1]:99999"] {
            #expect(Self.problem(text) == port, "\(text)")
        }
        #expect(Self.problem("[::1") == "unclosed [ in the host")
    }
}
