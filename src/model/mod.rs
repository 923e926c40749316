//! libvmaf JSON models: placeholder, being written.
