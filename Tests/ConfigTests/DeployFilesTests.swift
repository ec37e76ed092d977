import Config
import Foundation
import Testing

/// The Docker image, compose file and Kubernetes manifests parse, point at files that exist,
/// and agree with the configuration they ship on ports and probes.
@Suite struct DeployFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func text(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path)
    }

    func port(_ address: String?) -> Int? {
        address.flatMap { Int($0.split(separator: ":").last ?? "") }
    }

    /// A mapping's value by key.
    func value(_ node: YAMLNode?, _ key: String) -> YAMLNode? {
        guard case .mapping(let entries, _)? = node else { return nil }
        return entries.first { $0.key == key }?.value
    }

    func scalar(_ node: YAMLNode?) -> String? {
        if case .scalar(let text, _, _)? = node { return text }
        return nil
    }

    func items(_ node: YAMLNode?) -> [YAMLNode] {
        if case .sequence(let items, _)? = node { return items }
        return []
    }

    @Test func dockerfile() throws {
        let dockerfile = try text("docker/Dockerfile")
        let config = try ConfigLoader.load(
            path: Self.root.appendingPathComponent("docker/formgate.yaml").path
        ).get()
        #expect(dockerfile.contains("FROM swift:") && dockerfile.contains("-bookworm AS build"))
        #expect(dockerfile.contains("FROM debian:bookworm-slim"))
        #expect(dockerfile.contains("--static-swift-stdlib") || dockerfile.contains("RUN make release"))
        // Every make target the image runs exists in the Makefile.
        let makefile = try text("Makefile")
        for line in dockerfile.split(separator: "\n") where line.hasPrefix("RUN make ") {
            let target = line.split(separator: " ")[2]
            #expect(makefile.contains("\n\(target):"), "Makefile has no target \(target)")
        }
        // Every COPY source from the build context exists.
        for line in dockerfile.split(separator: "\n")
        where line.hasPrefix("COPY ") && !line.contains("--from") {
            let words = line.split(separator: " ").dropFirst()
            for source in words.dropLast() {
                #expect(exists(String(source)), "COPY source \(source) is missing")
            }
        }
        #expect(dockerfile.contains("USER 10001"))
        let exposed =
            dockerfile.split(separator: "\n").first { $0.hasPrefix("EXPOSE ") }?.split(separator: " ")
            .dropFirst()
            .compactMap { Int($0) } ?? []
        #expect(Set(exposed) == Set([port(config.listen), port(config.admin)].compactMap { $0 }))
        #expect(dockerfile.contains("http://127.0.0.1:\(port(config.admin) ?? 0)/healthz"))
        #expect(dockerfile.contains("/etc/formgate/formgate.yaml"))
    }

    @Test func composeFile() throws {
        let compose = try YAMLNode.parse(try text("docker/compose.yaml"))
        let services = value(compose, "services")
        let formgate = try #require(value(services, "formgate"))
        #expect(value(services, "php") != nil)
        let dockerfile = scalar(value(value(formgate, "build"), "dockerfile"))
        #expect(dockerfile.map { exists($0) } == true)
        for volume in items(value(formgate, "volumes")) + items(value(value(services, "php"), "volumes")) {
            let host = String(scalar(volume)?.split(separator: ":").first ?? "")
            #expect(exists("docker/" + host), "volume source \(host) is missing")
        }
        let config = try ConfigLoader.load(
            path: Self.root.appendingPathComponent("docker/formgate.yaml").path
        ).get()
        let published = items(value(formgate, "ports")).compactMap {
            scalar($0)?.split(separator: ":").last.flatMap { Int($0) }
        }
        #expect(Set(published) == Set([port(config.listen), port(config.admin)].compactMap { $0 }))
        #expect(config.upstream.host == "php")
    }

    @Test func kubernetesSidecar() throws {
        let documents = try text("docker/k8s-sidecar.yaml").components(separatedBy: "\n---\n").map {
            try YAMLNode.parse($0)
        }
        let kinds = documents.compactMap { scalar(value($0, "kind")) }
        #expect(kinds == ["ConfigMap", "Deployment", "Service"])
        let embedded = try #require(scalar(value(value(documents[0], "data"), "formgate.yaml")))
        let (stubbed, secrets) = try Self.stubSecrets(embedded)
        defer { for file in secrets.values { try? FileManager.default.removeItem(atPath: file) } }
        let config = try ConfigLoader.load(text: stubbed, file: "configmap").get()
        #expect(config.redis != nil && config.routes.contains { $0.sharedLimit != nil })
        let containers = items(
            value(value(value(value(documents[1], "spec"), "template"), "spec"), "containers"))
        let formgate = try #require(containers.first { scalar(value($0, "name")) == "formgate" })
        let upload = try #require(containers.first { scalar(value($0, "name")) == "upload-server" })
        let adminPort = try #require(port(config.admin))
        for probe in ["readinessProbe", "livenessProbe"] {
            #expect(scalar(value(value(value(formgate, probe), "httpGet"), "port")) == "\(adminPort)")
        }
        #expect(scalar(value(value(value(formgate, "readinessProbe"), "httpGet"), "path")) == "/readyz")
        #expect(scalar(value(value(value(formgate, "livenessProbe"), "httpGet"), "path")) == "/healthz")
        let ports = items(value(formgate, "ports")).compactMap {
            scalar(value($0, "containerPort")).flatMap { Int($0) }
        }
        #expect(Set(ports) == Set([port(config.listen), adminPort].compactMap { $0 }))
        let uploadPort = items(value(upload, "ports")).compactMap {
            scalar(value($0, "containerPort")).flatMap { Int($0) }
        }
        #expect(uploadPort == [config.upstream.port])
        let target = items(value(value(documents[2], "spec"), "ports")).first.flatMap {
            scalar(value($0, "targetPort"))
        }
        #expect(target == "\(port(config.listen) ?? 0)")
        // Every secret file the configuration names is under a volume the container mounts.
        let mounts = items(value(formgate, "volumeMounts")).compactMap { scalar(value($0, "mountPath")) }
        #expect(!secrets.isEmpty)
        for path in secrets.keys {
            #expect(mounts.contains { path.hasPrefix($0 + "/") }, "\(path) is not mounted")
        }
    }

    @Test func composeReplicas() throws {
        let (stubbed, secrets) = try Self.stubSecrets(text("docker/formgate-replicas.yaml"))
        defer { for file in secrets.values { try? FileManager.default.removeItem(atPath: file) } }
        let config = try ConfigLoader.load(text: stubbed, file: "formgate-replicas.yaml").get()
        #expect(config.redis != nil)
        #expect(config.routes.contains { $0.sharedLimit != nil })
        #expect(config.routes.contains { $0.tus?.objectStore != nil })
        let compose = try text("docker/compose.yaml")
        for path in secrets.keys {
            let name = path.split(separator: "/").last.map(String.init) ?? ""
            #expect(compose.contains(name), "the secret \(name) is not in compose.yaml")
        }
    }

    /// `text` with every `/run/secrets/…` path replaced by a temp file holding a placeholder
    /// (the deploy files name secrets mounted at run time), and those paths with their files.
    static func stubSecrets(_ text: String) throws -> (String, [String: String]) {
        var files: [String: String] = [:]
        var out = ""
        var rest = Substring(text)
        while let range = rest.range(of: "/run/secrets/") {
            out += rest[..<range.lowerBound]
            let tail = rest[range.lowerBound...]
            let path = String(tail.prefix { !$0.isWhitespace && $0 != "," && $0 != "}" && $0 != "\"" })
            let file = files[path] ?? NSTemporaryDirectory() + "formgate-deploy-secret-\(UUID().uuidString)"
            if files[path] == nil {
                try "placeholder-secret".write(toFile: file, atomically: true, encoding: .utf8)
                files[path] = file
            }
            out += file
            rest = tail.dropFirst(path.count)
        }
        return (out + rest, files)
    }
}
