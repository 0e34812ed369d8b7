import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process the tests start with `posix_spawn`, with pipes for the streams they read or write.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` with a `struct dirent` copy
/// that can read past glibc's buffer and crash the test process (swift-corelibs-foundation#5472, seen
/// in CI as a SIGSEGV in `Process.run()` while another suite held many descriptors open). This type
/// asks the C library to close every other descriptor in the child instead.
public final class ChildProcess: Sendable {
    /// What the child gets on one of its standard streams.
    public enum Stream: Sendable {
        /// A pipe whose other end the test holds.
        case pipe
        /// `/dev/null`.
        case null
        /// Standard error only: the same pipe as standard output.
        case output
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// The exit status, or 128 plus the signal number, as a shell reports it.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// A failure to start the child.
    public struct SpawnError: Error, CustomStringConvertible {
        public var executable: String
        public var code: Int32
        public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
    }

    public let processIdentifier: pid_t
    /// The write end of the child's standard input, when it is a pipe.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output, when it is a pipe.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it is a pipe of its own.
    public let standardError: FileHandle?

    /// Starts `executable` with `arguments`; `environment` nil passes on the test process's own.
    public init(
        executable: String, arguments: [String], environment: [String: String]? = nil, input: Stream = .null,
        output: Stream = .pipe, errors: Stream = .pipe
    ) throws {
        var actions = Self.makeFileActions()
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }

        func pipePair() throws -> (read: Int32, write: Int32) {
            // Close-on-exec (the Glibc module does not import pipe2); a child another thread starts
            // between the two calls still holds no end of it, as the children close all but 0, 1 and 2.
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw SpawnError(executable: executable, code: errno) }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }

        var inputHandle: FileHandle?
        switch input {
        case .pipe:
            let pair = try pipePair()
            posix_spawn_file_actions_adddup2(&actions, pair.read, 0)
            childEnds.append(pair.read)
            parentEnds.append(pair.write)
            inputHandle = FileHandle(fileDescriptor: pair.write, closeOnDealloc: true)
        case .null, .output:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        var outputHandle: FileHandle?
        var outputWriteEnd: Int32 = -1
        switch output {
        case .pipe, .output:
            let pair = try pipePair()
            posix_spawn_file_actions_adddup2(&actions, pair.write, 1)
            childEnds.append(pair.write)
            outputWriteEnd = pair.write
            outputHandle = FileHandle(fileDescriptor: pair.read, closeOnDealloc: true)
        case .null:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        var errorHandle: FileHandle?
        switch errors {
        case .pipe:
            let pair = try pipePair()
            posix_spawn_file_actions_adddup2(&actions, pair.write, 2)
            childEnds.append(pair.write)
            errorHandle = FileHandle(fileDescriptor: pair.read, closeOnDealloc: true)
        case .output where outputWriteEnd >= 0:
            posix_spawn_file_actions_adddup2(&actions, outputWriteEnd, 2)
        case .null, .output:
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Every descriptor the test process holds, but the three streams, stays out of the child.
        Self.closeOthers(&actions)

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for argument in argv { free(argument) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { for variable in envp ?? [] { free(variable) } }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { arguments in
            if let envp {
                return (envp + [nil]).withUnsafeBufferPointer { variables in
                    posix_spawn(
                        &pid, executable, &actions, nil, UnsafeMutablePointer(mutating: arguments.baseAddress!),
                        UnsafeMutablePointer(mutating: variables.baseAddress!))
                }
            }
            return posix_spawn(
                &pid, executable, &actions, nil, UnsafeMutablePointer(mutating: arguments.baseAddress!), environ)
        }
        guard result == 0 else {
            for fd in parentEnds { close(fd) }
            throw SpawnError(executable: executable, code: result)
        }
        processIdentifier = pid
        standardInput = inputHandle
        standardOutput = outputHandle
        standardError = errorHandle
    }

    /// Waits for the child to end (blocking the calling thread).
    public func wait() -> Termination {
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) == -1 {
            if errno != EINTR { return .exited(-1) }
        }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// Waits for the child to end on a thread of its own, without blocking the caller's.
    public func terminated() async -> Termination {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.wait()) }
        }
    }

    /// Sends `signal` to the child.
    public func send(signal: Int32) {
        kill(processIdentifier, signal)
    }

    /// Runs `executable` to its end: its termination, standard output and standard error.
    ///
    /// The waiting happens on a thread of its own: a test that waited on a thread of the concurrency
    /// pool (it has one per core) for a child that runs for seconds starved every other test of the
    /// run, and their timeouts fired late (CI: an operation bounded at 1 s answered after 10.8 s while
    /// two suites ran `tessera` commands one after another).
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) async throws -> (termination: Termination, output: String, errors: String) {
        try await onThread {
            try runBlocking(executable, arguments, environment: environment, input: input)
        }
    }

    /// Runs `body`, which blocks, on a thread of its own rather than one of the concurrency pool's.
    public static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    private static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]?, input: String?
    ) throws -> (termination: Termination, output: String, errors: String) {
        let child = try ChildProcess(
            executable: executable, arguments: arguments, environment: environment,
            input: input == nil ? .null : .pipe)
        if let input, let handle = child.standardInput {
            handle.write(Data(input.utf8))
            try handle.close()
        }
        // Standard error is read on a thread of its own so that neither pipe fills while the other is read.
        let errors = Box()
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            errors.data = child.standardError?.readDataToEndOfFile() ?? Data()
            errorsRead.signal()
        }
        let output = child.standardOutput?.readDataToEndOfFile() ?? Data()
        errorsRead.wait()
        let termination = child.wait()
        return (termination, String(decoding: output, as: UTF8.self), String(decoding: errors.data, as: UTF8.self))
    }

    private final class Box: @unchecked Sendable {
        // Written by one thread before the semaphore is signalled, read after it is waited for.
        var data = Data()
    }

    #if canImport(Darwin)
        private static func makeFileActions() -> posix_spawn_file_actions_t? {
            var actions: posix_spawn_file_actions_t?
            posix_spawn_file_actions_init(&actions)
            return actions
        }

        private static func closeOthers(_ actions: inout posix_spawn_file_actions_t?) {
            // The pipes are close-on-exec; Darwin's POSIX_SPAWN_CLOEXEC_DEFAULT is not needed for them.
        }
    #else
        private static func makeFileActions() -> posix_spawn_file_actions_t {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            return actions
        }

        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Glibc module
        /// does not import; looked up once by name.
        private typealias AddCloseFrom =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) ->
            Int32
        private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: AddCloseFrom.self)
        }

        private static func closeOthers(_ actions: inout posix_spawn_file_actions_t) {
            // Without it (an older C library) the child inherits only what is not close-on-exec.
            _ = addCloseFrom?(&actions, 3)
        }
    #endif
}
