// roofplan/device/catalog.hpp — the built-in device catalog and lookups by id or alias (case-insensitive).
#pragma once

#include <roofplan/detail/suggest.hpp>
#include <roofplan/device/catalog_data.hpp>
#include <roofplan/device/device.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan {

/// Every built-in device (SPEC.md §6), in catalog order.  Generated from data/devices.json.
constexpr std::span<const Device> builtin_devices() { return detail::builtin_device_table; }

/// The built-in device with this id or alias, or nullptr.
constexpr const Device* find_builtin_device(std::string_view name) {
    for (const Device& d : detail::builtin_device_table)
        if (d.answers_to(name)) return &d;
    return nullptr;
}

namespace detail {
inline std::string unknown_device_message(std::string_view name, std::span<const Device> devices) {
    std::vector<std::string> names;
    for (const Device& d : devices) {
        names.emplace_back(d.id.view());
        for (const DeviceId& a : d.aliases)
            if (!a.empty()) names.emplace_back(a.view());
    }
    std::string message = cat("unknown device '", name, "'");
    if (const std::string hint = did_you_mean(name, names, 4); !hint.empty()) message += "; " + hint;
    message += " Known devices:";
    for (const Device& d : devices) message += cat(" ", d.id.view());
    message += cat(" (or add your own with ", field_ref("device_file"), ")");
    return message;
}
}  // namespace detail

/// A device catalog: the built-in devices plus any a user adds (which replace a built-in of the same id).
class DeviceCatalog {
public:
    DeviceCatalog() : devices_(builtin_devices().begin(), builtin_devices().end()) {}

    /// Adds (or replaces, by id) a device after validating it.  An alias that another device answers to is an
    /// error.  `where` names the origin for messages (e.g. the file).
    void add(const Device& device, std::string_view where = "device") {
        validate(device, where);
        Device* same = nullptr;
        for (Device& d : devices_)
            if (d.id.view() == device.id.view()) same = &d;
        for (const Device& d : devices_) {
            if (&d == same) continue;
            if (d.answers_to(device.id.view()))
                detail::fail(where, ": device id '", device.id.view(), "' is already an alias of '", d.id.view(), "'");
            for (const DeviceId& a : device.aliases)
                if (!a.empty() && d.answers_to(a.view()))
                    detail::fail(where, ": alias '", a.view(), "' of device '", device.id.view(),
                                 "' already names device '", d.id.view(), "'");
        }
        if (same) *same = device;
        else devices_.push_back(device);
    }

    /// The device with this id or alias; unknown names are an error listing close matches and all ids.
    [[nodiscard]] const Device& find(std::string_view name) const {
        for (const Device& d : devices_)
            if (d.answers_to(name)) return d;
        detail::fail_about("device", detail::unknown_device_message(name, devices_));
    }
    [[nodiscard]] const Device* try_find(std::string_view name) const {
        for (const Device& d : devices_)
            if (d.answers_to(name)) return &d;
        return nullptr;
    }
    [[nodiscard]] std::span<const Device> devices() const { return devices_; }

private:
    std::vector<Device> devices_;
};

/// The built-in device with this id or alias; unknown names are an error listing close matches.
inline const Device& find_device(std::string_view name) {
    if (const Device* d = find_builtin_device(name)) return *d;
    detail::fail_about("device", detail::unknown_device_message(name, builtin_devices()));
}

}  // namespace roofplan
