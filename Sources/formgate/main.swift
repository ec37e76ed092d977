// formgate: the command line (run, check, demo-upstream, version).

import DemoUpstream
import EventLoop

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

func runDemoUpstream(_ arguments: [String]) -> Never {
    var listen = "127.0.0.1:9000"
    var drain = false
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--listen":
            guard let value = iterator.next() else { fail("--listen needs an address") }
            listen = value
        case "--drain": drain = true
        default: fail("demo-upstream: unknown option \(argument)\n\n\(usage)")
        }
    }
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

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    FileHandleStderr.write(usage)
    exit(2)
}
arguments.removeFirst()
switch command {
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
