import Testing

/// Aliyun OSS PostObject, V1 and V4, through FormGate to the verifying mock
/// (`Resources/oss_post_mock.py`): a client that sends no credentials uploads, and the object
/// read back is byte-exact under the templated key with the sniffed type; a wrong secret, an
/// expired policy, a key outside the policy and a file over its length range are refused.
@Suite(.serialized) struct OSSPostRoundTripTests {
    @Test(arguments: [PostObjectStore.ossV1, .ossV4], [1 << 20, 32 << 20])
    func bufferedUploadsRoundTrip(store: PostObjectStore, bytes: Int) throws {
        try store.roundTrip(bytes: bytes, requestBody: "buffer")
    }

    /// Needs stream mode to send an exact Content-Length for a provider route: OSS, like the
    /// mock, answers a chunked body with 411 MissingContentLength.
    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func streamedUploadsRoundTrip(store: PostObjectStore) throws {
        try store.roundTrip(bytes: 1 << 20, requestBody: "stream")
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func theSecurityTokenAndSuccessStatusArrive(store: PostObjectStore) throws {
        try store.carriesTheSecurityToken()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func aWrongSecretIsRefused(store: PostObjectStore) throws {
        try store.refusesAWrongSecret()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func anExpiredPolicyIsRefused(store: PostObjectStore) throws {
        try store.refusesAnExpiredPolicy()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func aKeyOutsideThePolicyIsRefused(store: PostObjectStore) throws {
        try store.refusesAKeyOutsideThePolicy()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func aFileOverTheLengthRangeIsRefused(store: PostObjectStore) throws {
        try store.refusesAFileOverTheLengthRange()
    }
}
