import Foundation

// The C library's file calls under names that no type's own `open`, `read`, `write` or `close` hides (`InputFile.open`,
// say), so that callers need not name the C library's module: Glibc or Musl on Linux, Darwin on Apple platforms.

/// `open(2)`: a descriptor, or −1 with `errno` set.
package func systemOpen(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }

/// `read(2)`: bytes read, 0 at the end, or −1 with `errno` set.
package func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }

/// `write(2)`: bytes written, or −1 with `errno` set.
package func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(descriptor, buffer, count) }

/// `close(2)`.
@discardableResult
package func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
