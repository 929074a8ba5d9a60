/**
 * The one settings model of Headroom's enforcement, free of any framework: a root
 * ({@link dev.headroom.enforcement.settings.LimitSettings}: the service's why and its policies), policies
 * ({@link dev.headroom.enforcement.settings.PolicySettings}), plans, field rules, routes
 * ({@link dev.headroom.enforcement.settings.RouteSettings}), the service and the store, and the one
 * converter ({@link dev.headroom.enforcement.settings.SettingsReader}) from them to the values
 * enforcement runs on ({@code QuotaPolicy}, {@code PolicyTexts}, {@code Escalation},
 * {@code AllowList}, {@code Plans}, {@code FieldRules}, {@code RouteRules}). The gateway's YAML and the Spring
 * starters ({@code headroom.*}, {@code headroom.cloud-gateway.*}) are bindings of it; a problem
 * is a {@link dev.headroom.enforcement.settings.SettingsProblem} naming the setting in the binding's
 * spelling, and a read reports every problem at once in a
 * {@link dev.headroom.enforcement.settings.SettingsException}.
 *
 * <p>May use headroom-core and headroom-http's vocabulary and enforcement packages; nothing here
 * knows a binder.
 */
package dev.headroom.enforcement.settings;
