import ProxyCore
import Resumable

extension TusLoader {
    /// `store: { s3: { endpoint, bucket, region, prefix, access_key, secret_key (or
    /// secret_key_file), session_token, part_size, lock_ttl } }`. Needs the top-level `redis:` (the lock
    /// that keeps two replicas from writing one upload).
    static func decodeObjectStore(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder
    ) -> ObjectStoreSettings? {
        guard let outer = decoder.mapping(node, path, allowed: ["s3"]) else { return nil }
        guard let s3 = outer.first else {
            decoder.fail(node.mark, path, "expected a directory or { s3: { … } }")
            return nil
        }
        let keyPath = join(path, "s3")
        let keys: Set<String> = ConfigLoader.withSecretFiles([
            "endpoint", "bucket", "region", "prefix", "access_key", "secret_key", "session_token",
            "part_size", "lock_ttl",
        ])
        guard let entries = decoder.mapping(s3.value, keyPath, allowed: keys) else { return nil }
        if decoder.redis == nil {
            decoder.fail(
                s3.keyMark, keyPath,
                "an s3 store needs redis: (the lock that keeps two replicas off one upload)")
        }
        var endpoint: (scheme: String, host: String, port: Int)?
        var bucket: String?
        var region = "us-east-1"
        var prefix = ""
        var partSize = ObjectStoreSettings.defaultPartSize
        var lockMilliseconds = ObjectStoreSettings.defaultLockMilliseconds
        for (key, _, value) in entries {
            let entryPath = join(keyPath, key)
            switch key {
            case "endpoint":
                guard let text = decoder.string(value, entryPath) else { continue }
                endpoint = ObjectStoreSettings.endpoint(text)
                if endpoint == nil {
                    decoder.fail(value.mark, entryPath, "expected http(s)://HOST[:PORT]")
                }
            case "bucket":
                guard let text = decoder.string(value, entryPath) else { continue }
                if bucketName(text) {
                    bucket = text
                } else {
                    decoder.fail(value.mark, entryPath, "not a bucket name (3 to 63 of a-z 0-9 . -)")
                }
            case "region":
                guard let text = decoder.string(value, entryPath) else { continue }
                if !text.isEmpty, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") })
                {
                    region = text
                } else {
                    decoder.fail(value.mark, entryPath, "not a region")
                }
            case "prefix":
                guard let text = decoder.string(value, entryPath) else { continue }
                if text.utf8.count <= 512, !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }),
                    !text.hasPrefix("/")
                {
                    prefix = text
                } else {
                    decoder.fail(
                        value.mark, entryPath, "a key prefix without control characters or a leading /")
                }
            case "part_size":
                guard let size = decoder.size(value, entryPath) else { continue }
                if size >= Int64(ObjectStoreSettings.minimumPartSize), size <= 1 << 30 {
                    partSize = Int(size)
                } else {
                    decoder.fail(value.mark, entryPath, "must be from 5MiB (S3's smallest part) to 1GiB")
                }
            case "lock_ttl":
                guard let milliseconds = decoder.duration(value, entryPath) else { continue }
                if (1000...600_000).contains(milliseconds) {
                    lockMilliseconds = milliseconds
                } else {
                    decoder.fail(value.mark, entryPath, "must be from 1s to 10m")
                }
            default:
                // Credentials: read below, through `secretValue`.
                continue
            }
        }
        let accessKey = ConfigLoader.secretValue("access_key", in: entries, keyPath, &decoder)
        let secretKey = ConfigLoader.secretValue("secret_key", in: entries, keyPath, &decoder)
        let sessionToken = ConfigLoader.secretValue("session_token", in: entries, keyPath, &decoder)
        for (name, value) in [("endpoint", endpoint != nil), ("bucket", bucket != nil)] where !value {
            if !entries.contains(where: { $0.key == name }) {
                decoder.fail(s3.value.mark, join(keyPath, name), "an s3 store needs \(name)")
            }
        }
        for (name, value) in [("access_key", accessKey), ("secret_key", secretKey)] where value == nil {
            if !entries.contains(where: { $0.key == name || $0.key == name + "_file" }) {
                decoder.fail(
                    s3.value.mark, join(keyPath, name), "an s3 store needs \(name) (or \(name)_file)")
            }
        }
        guard let endpoint, let bucket, let accessKey, let secretKey, decoder.redis != nil else { return nil }
        var settings = ObjectStoreSettings(
            scheme: endpoint.scheme, host: endpoint.host, port: endpoint.port, bucket: bucket, region: region,
            prefix: prefix, accessKey: accessKey, secretKey: secretKey, sessionToken: sessionToken,
            partSize: partSize)
        settings.lockMilliseconds = lockMilliseconds
        return settings
    }

    /// S3's bucket naming rules, loosely: 3 to 63 of lower-case letters, digits, `.` and `-`.
    private static func bucketName(_ name: String) -> Bool {
        (3...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "-")
            }
    }
}
