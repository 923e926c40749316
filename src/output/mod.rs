//! libvmaf-shaped logs: placeholder, being written.
