// formgate: the command line (run, check, demo-upstream, version).

import Config
import DemoUpstream
import EventLoop
import Proxy
import ProxyCore
import Resumable
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

let version = "0.1.0"

let usage = """
    usage: formgate <command> [options]

    commands:
      run [-c FILE] [--listen ADDR] [--upstream URL]   serve with a config (default conf/formgate.yaml)
      check [-c FILE]                                  validate a config
      demo-upstream [--listen ADDR] [--drain]          a built-in upload server that answers with JSON
      version                                          print the version

    """

func fail(_ message: String) -> Never {
    FileHandleStderr.write("formgate: \(message)\n")
    exit(1)
}

enum FileHandleStderr {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// Parses `--name VALUE` options (`-c` is `--config`) and value-less `flags` for `command`;
/// exits with the usage on anything else.
func options(_ arguments: [String], command: String, values: Set<String>, flags: Set<String> = [])
    -> [String: String]
{
    var result: [String: String] = [:]
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        let name = argument == "-c" ? "--config" : argument
        if flags.contains(name) {
            result[name] = "true"
            continue
        }
        guard values.contains(name) else { fail("\(command): unknown option \(argument)\n\n\(usage)") }
        guard let value = iterator.next() else { fail("\(argument) needs a value") }
        result[name] = value
    }
    return result
}

/// Loads the configuration or exits 1 listing every error.
func loadConfig(_ path: String) -> ServerConfig {
    switch ConfigLoader.load(path: path) {
    case .success(let config):
        return config
    case .failure(let errors):
        FileHandleStderr.write(errors.description + "\n")
        exit(1)
    }
}

func runCheck(_ arguments: [String]) -> Never {
    let configPath =
        options(arguments, command: "check", values: ["--config"])["--config"] ?? "conf/formgate.yaml"
    let config = loadConfig(configPath)
    // The YAML only names the certificate files: load them as `run` would.
    for listener in config.listeners {
        guard let tls = listener.tls else { continue }
        do throws(EventLoopError) {
            _ = try TLSListenerContext(address: listener.address, settings: tls)
        } catch {
            fail("\(configPath): listen \(listener.address): \(error.message)")
        }
    }
    for route in config.routes {
        guard let tus = route.tus, tus.objectStore == nil,
            let problem = DirectoryStore.problem(path: tus.store)
        else { continue }
        fail("\(configPath): route \(route.name): tus.store: \(problem)")
    }
    for warning in config.warnings { print("warning: \(warning)") }
    for scanner in config.scanners.values.sorted(by: { $0.name < $1.name }) {
        for warning in ConfigLoader.scannerWarnings(scanner) {
            print("warning: scanners.clamd.\(scanner.name): \(warning)")
        }
    }
    print("\(configPath): ok (\(config.routes.count) routes, upstream \(config.upstream))")
    exit(0)
}

func runDemoUpstream(_ arguments: [String]) -> Never {
    let given = options(arguments, command: "demo-upstream", values: ["--listen"], flags: ["--drain"])
    let listen = given["--listen"] ?? "127.0.0.1:9000"
    let drain = given["--drain"] != nil
    signal(SIGPIPE, SIG_IGN)
    do throws(EventLoopError) {
        let base = try EventBase()
        let server = try DemoUpstream(
            base: base, address: try SocketAddress(parsing: listen), drainOnly: drain)
        let stop = { base.stop() }
        let watchers = [
            SignalWatcher(base: base, signal: SIGTERM, stop), SignalWatcher(base: base, signal: SIGINT, stop),
        ]
        FileHandleStderr.write(
            "formgate demo-upstream listening on \(server.address?.description ?? listen)\n")
        base.run()
        withExtendedLifetime((server, watchers)) {}
        exit(0)
    } catch {
        fail("\(error)")
    }
}

/// The hashing threads every worker's digests share (one per core), started by `startThread`
/// (`EventLoopThread.start`); `FORMGATE_TEST_HASHING_GATE` holds them at a FIFO (a test hook).
func makeDigestPool<Failure: Error>(
    startThread: (_ name: String, _ body: @escaping @Sendable () -> Void) throws(Failure) -> Void
) throws(Failure) -> DigestPool {
    let gate = HashingGate.fromEnvironment()
    return try DigestPool(
        threads: max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))), beforeFirstBlock: gate.map { $0.pass },
        startThread: startThread)
}

/// Raises the soft RLIMIT_NOFILE to the hard limit (as Go's runtime does; nginx has
/// `worker_rlimit_nofile`); returns the soft limit before and after (-1: unknown).
func raiseDescriptorLimit() -> (before: Int, now: Int) {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (-1, -1) }
    let before = Int(clamping: limit.rlim_cur)
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    return (before, Int(clamping: limit.rlim_cur))
}

/// Clamps `limits.connections` to what the descriptor limit holds and says so once.
func fitConnections(_ config: inout ServerConfig) {
    let descriptors = raiseDescriptorLimit()
    guard descriptors.now > 0 else { return }
    let configured = config.limits.connections
    let cap = config.connectionCap(descriptorLimit: descriptors.now)
    config.limits.connections = cap
    let raised = descriptors.now > descriptors.before ? ", raised from \(descriptors.before)" : ""
    if cap < configured {
        ErrorLog.shared.write(
            .warn,
            "limits.connections: \(configured) clamped to \(cap) client connections, what RLIMIT_NOFILE "
                + "\(descriptors.now)\(raised) allows (\(ServerConfig.descriptorsPerConnection) descriptors per "
                + "connection, \(config.reservedDescriptors) reserved); raise the limit (ulimit -n, LimitNOFILE=, "
                + "docker --ulimit nofile=) to serve more")
    } else {
        ErrorLog.shared.write(
            .info, "limits.connections: \(cap) client connections (RLIMIT_NOFILE \(descriptors.now)\(raised))"
        )
    }
}

func runProxy(_ arguments: [String]) -> Never {
    let given = options(arguments, command: "run", values: ["--config", "--listen", "--upstream"])
    let configPath = given["--config"] ?? "conf/formgate.yaml"
    let listen = given["--listen"]
    let upstream = given["--upstream"]
    var config = loadConfig(configPath)
    if let listen { config.listen = listen }
    if let upstream {
        guard let url = UpstreamURL(parsing: upstream) else {
            fail("--upstream: not an http(s) URL: \(upstream)")
        }
        config.upstream = url
    }
    fitConnections(&config)
    for warning in config.warnings { ErrorLog.shared.write(.warn, warning) }
    signal(SIGPIPE, SIG_IGN)
    var signals = sigset_t()
    sigemptyset(&signals)
    for value in [SIGTERM, SIGINT, SIGHUP, SIGUSR1] { sigaddset(&signals, value) }
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    let server: ProxyServer
    do throws(EventLoopError) {
        let hashing = try makeDigestPool { name, body throws(EventLoopError) in
            _ = try EventLoopThread.start(name: name, body)
        }
        let spoolGate = HashingGate.fromEnvironment("FORMGATE_TEST_SPOOL_GATE")
        server = try ProxyServer(
            config: config, digestPool: hashing, spoolGate: spoolGate.map { $0.pass }, version: version)
        try server.start()
    } catch {
        fail("\(error)")
    }
    let log = ErrorLog.shared
    let listening = server.addresses.map { "\($0.address)\($0.tls ? " (TLS)" : "")" }.joined(separator: ", ")
    log.write(
        .info,
        "\(version) listening on \(listening.isEmpty ? config.listen : listening), upstream \(config.upstream), "
            + "\(config.effectiveWorkers) workers" + (server.adminAddress.map { ", admin on \($0)" } ?? ""))
    var current = config
    while true {
        var received: Int32 = 0
        sigwait(&signals, &received)
        if received == SIGUSR1 {
            server.reopenLogs()
            log.write(.info, "access log reopened")
            continue
        }
        if received == SIGHUP {
            switch ConfigLoader.load(path: configPath) {
            case .success(var next):
                for warning in next.warnings { log.write(.warn, "reload: \(warning)") }
                if let listen { next.listen = listen }
                if let upstream, let url = UpstreamURL(parsing: upstream) { next.upstream = url }
                if next.listeners.map(\.address) != current.listeners.map(\.address)
                    || next.listeners.map({ $0.tls == nil }) != current.listeners.map({ $0.tls == nil })
                    || next.workers != current.workers
                {
                    log.write(
                        .warn,
                        "reload: listeners added, removed or changed to or from TLS, and workers, take effect at the next start"
                    )
                }
                server.reload(next)
                // The certificate files are read again even when the configuration is unchanged.
                for error in server.reloadCertificates(next) {
                    log.write(.error, "reload: TLS certificates kept for \(error)")
                }
                current = next
                log.write(.info, "configuration reloaded from \(configPath)")
            case .failure(let errors):
                server.reloadRefused()
                log.write(.error, "reload refused, keeping the running configuration:\n\(errors)")
            }
            continue
        }
        log.write(.info, "draining (up to \(current.timeouts.drain) ms)")
        let drainStarted = monotonicMilliseconds()
        let finished = server.drain(milliseconds: current.timeouts.drain)
        // The spans of the requests that ended get what is left of the drain (a second at least).
        server.flushTraces(
            milliseconds: max(1000, current.timeouts.drain - (monotonicMilliseconds() - drainStarted)))
        server.flushLogs()
        log.write(finished ? .info : .warn, finished ? "stopped" : "drain timeout, exiting")
        log.flush()
        exit(0)
    }
}

// A parent may have spawned us with signals blocked (posix_spawn keeps the mask): start clean.
var emptySignalSet = sigset_t()
sigemptyset(&emptySignalSet)
pthread_sigmask(SIG_SETMASK, &emptySignalSet, nil)

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    FileHandleStderr.write(usage)
    exit(2)
}
arguments.removeFirst()
switch command {
case "run":
    runProxy(arguments)
case "check":
    runCheck(arguments)
case "demo-upstream":
    runDemoUpstream(arguments)
case "version", "--version":
    print("formgate \(version)")
case "--help", "-h", "help":
    print(usage, terminator: "")
default:
    FileHandleStderr.write("formgate: unknown command \(command)\n\n\(usage)")
    exit(2)
}
