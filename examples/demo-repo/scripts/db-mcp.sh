#!/bin/sh
exec echo db-mcp "$@"
