// roofplan/device/catalog.hpp — the built-in device catalog and lookups by id or alias (case-insensitive).
#pragma once

#include <roofplan/detail/suggest.hpp>
#include <roofplan/device/catalog_data.hpp>
#include <roofplan/device/device.hpp>

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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
    DeviceCatalog() : devices_(builtin_devices().begin(), builtin_devices().end()), origin_(devices_.size()) {
        for (std::size_t i = 0; i < devices_.size(); ++i) index(i);
    }

    /// Adds (or replaces a built-in of the same id) a device after validating it.  An id or alias that another
    /// device answers to is an error, and so is a second device of one id from the user (`where` names each
    /// origin in messages, e.g. the file and the JSON path).  Each name is looked up in a hash table: adding n
    /// devices takes O(n).
    void add(const Device& device, std::string_view where = "device") {
        validate(device, where);
        const auto owner = [&](std::string_view name) -> std::ptrdiff_t {
            const auto it = by_name_.find(key(name));
            return it == by_name_.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
        };
        const std::ptrdiff_t same_index = owner(device.id.view());
        if (same_index >= 0) {
            const Device& same = devices_[static_cast<std::size_t>(same_index)];
            if (same.id.view() != device.id.view() && !detail::iequals(same.id.view(), device.id.view()))
                detail::fail(where, ": device id '", device.id.view(), "' is already an alias of '", same.id.view(), "'");
            if (!origin_[static_cast<std::size_t>(same_index)].empty())
                detail::fail(where, ": device id '", device.id.view(), "' is given twice (first at ",
                             origin_[static_cast<std::size_t>(same_index)], "); ids must be unique");
        }
        for (const DeviceId& a : device.aliases) {
            const std::ptrdiff_t o = a.empty() ? -1 : owner(a.view());
            if (o >= 0 && o != same_index)
                detail::fail(where, ": alias '", a.view(), "' of device '", device.id.view(), "' already names device '",
                             devices_[static_cast<std::size_t>(o)].id.view(), "'");
        }
        std::size_t at = devices_.size();
        if (same_index >= 0) {
            at = static_cast<std::size_t>(same_index);
            unindex(at);
            devices_[at] = device;
            origin_[at] = std::string(where);
        } else {
            devices_.push_back(device);
            origin_.emplace_back(where);
        }
        index(at);
    }

    /// The device with this id or alias; unknown names are an error listing close matches and all ids.
    [[nodiscard]] const Device& find(std::string_view name) const {
        if (const Device* d = try_find(name)) return *d;
        detail::fail_about("device", detail::unknown_device_message(name, devices_));
    }
    [[nodiscard]] const Device* try_find(std::string_view name) const {
        const auto it = by_name_.find(key(name));
        return it == by_name_.end() ? nullptr : &devices_[it->second];
    }
    [[nodiscard]] std::span<const Device> devices() const { return devices_; }

private:
    static std::string key(std::string_view name) {
        std::string k(name);
        for (char& c : k) c = detail::lower(c);
        return k;
    }
    void index(std::size_t i) {
        const Device& d = devices_[i];
        by_name_.emplace(key(d.id.view()), i);
        for (const DeviceId& a : d.aliases)
            if (!a.empty()) by_name_.emplace(key(a.view()), i);
    }
    void unindex(std::size_t i) {
        const Device& d = devices_[i];
        by_name_.erase(key(d.id.view()));
        for (const DeviceId& a : d.aliases)
            if (!a.empty()) by_name_.erase(key(a.view()));
    }

    std::vector<Device> devices_;
    std::vector<std::string> origin_;  ///< where a user's device came from; empty for the built-ins
    std::unordered_map<std::string, std::size_t> by_name_;  ///< lowercase id or alias -> index
};

/// The built-in device with this id or alias; unknown names are an error listing close matches.
inline const Device& find_device(std::string_view name) {
    if (const Device* d = find_builtin_device(name)) return *d;
    detail::fail_about("device", detail::unknown_device_message(name, builtin_devices()));
}

}  // namespace roofplan
