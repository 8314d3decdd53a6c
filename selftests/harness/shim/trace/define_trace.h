/* shim: TRACE_EVENT() is a stub in kshim.h; nothing to define */
